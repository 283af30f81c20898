#include "server/mcp/json_writer.h"

#include <cstring>

namespace imgmcp::mcp {
namespace {

// Strings at least this long are checked for the verbatim path; shorter ones are not worth it.
constexpr size_t kVerbatimMinChars = 256;

// True when dump() would write `s` unchanged between quotes: printable ASCII without '"' or '\'.
bool NeedsNoEscaping(const std::string& s) {
  // Branch-free so the compiler vectorises it: a multi-megabyte string is checked at memory speed.
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const size_t n = s.size();
  unsigned bad = 0;
  for (size_t i = 0; i < n; ++i) {
    const unsigned c = p[i];
    bad |= (c < 0x20) | (c >= 0x7f) | (c == '"') | (c == '\\');
  }
  return bad == 0;
}

void AppendKey(const std::string& key, std::string& out) {
  bool plain = true;
  for (unsigned char c : key) {
    if (c < 0x20 || c >= 0x7f || c == '"' || c == '\\') {
      plain = false;
      break;
    }
  }
  if (plain) {
    out += '"';
    out += key;
    out += '"';
  } else {
    out += Json(key).dump(-1, ' ', false, Json::error_handler_t::replace);
  }
}

}  // namespace

void AppendCompactJson(const Json& value, std::string& out) {
  switch (value.type()) {
    case Json::value_t::object: {
      out += '{';
      bool first = true;
      for (auto it = value.cbegin(); it != value.cend(); ++it) {
        if (!first) out += ',';
        first = false;
        AppendKey(it.key(), out);
        out += ':';
        AppendCompactJson(it.value(), out);
      }
      out += '}';
      return;
    }
    case Json::value_t::array: {
      out += '[';
      bool first = true;
      for (const Json& element : value) {
        if (!first) out += ',';
        first = false;
        AppendCompactJson(element, out);
      }
      out += ']';
      return;
    }
    case Json::value_t::string: {
      const std::string& s = value.get_ref<const std::string&>();
      if (s.size() >= kVerbatimMinChars && NeedsNoEscaping(s)) {
        out.reserve(out.size() + s.size() + 64);
        out += '"';
        out += s;
        out += '"';
        return;
      }
      break;
    }
    default:
      break;
  }
  out += value.dump(-1, ' ', false, Json::error_handler_t::replace);
}

std::string DumpCompactJson(const Json& value) {
  std::string out;
  AppendCompactJson(value, out);
  return out;
}

}  // namespace imgmcp::mcp
