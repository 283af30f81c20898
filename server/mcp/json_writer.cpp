#include "server/mcp/json_writer.h"

#include <charconv>
#include <cstring>
#include <string_view>

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

bool IsAscii(std::string_view s) {
  unsigned high = 0;
  for (unsigned char c : s) high |= c;  // vectorised, like NeedsNoEscaping
  return high < 0x80;
}

// Appends an ASCII string as dump() writes it: '"' and '\' escaped, the control characters as
// \b \f \n \r \t or \u00xx, everything else (DEL included) as it is.
void AppendAsciiString(std::string_view s, std::string& out) {
  out += '"';
  size_t run = 0;  // start of the bytes not yet copied
  for (size_t i = 0; i < s.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c != '"' && c != '\\') continue;
    out.append(s.data() + run, i - run);
    run = i + 1;
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default: {
        static constexpr char kHex[] = "0123456789abcdef";
        const char escape[] = {'\\', 'u', '0', '0', kHex[c >> 4], kHex[c & 0xf]};
        out.append(escape, sizeof escape);
      }
    }
  }
  out.append(s.data() + run, s.size() - run);
  out += '"';
}

// A string as dump() writes it. Non-ASCII text goes through nlohmann, which checks its UTF-8 and
// replaces invalid bytes.
void AppendString(const std::string& s, std::string& out) {
  if (s.size() >= kVerbatimMinChars && NeedsNoEscaping(s)) {
    out.reserve(out.size() + s.size() + 64);
    out += '"';
    out += s;
    out += '"';
  } else if (IsAscii(s)) {
    AppendAsciiString(s, out);
  } else {
    out += Json(s).dump(-1, ' ', false, Json::error_handler_t::replace);
  }
}

template <typename Integer>
void AppendInteger(Integer value, std::string& out) {
  char digits[24];
  const auto [end, ec] = std::to_chars(digits, digits + sizeof digits, value);
  out.append(digits, end);
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
        AppendString(it.key(), out);
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
    case Json::value_t::string:
      return AppendString(value.get_ref<const std::string&>(), out);
    case Json::value_t::boolean:
      out += value.get<bool>() ? "true" : "false";
      return;
    case Json::value_t::null:
      out += "null";
      return;
    case Json::value_t::number_integer:
      return AppendInteger(value.get<Json::number_integer_t>(), out);
    case Json::value_t::number_unsigned:
      return AppendInteger(value.get<Json::number_unsigned_t>(), out);
    default:  // floating point (nlohmann's shortest round-trip form), binary, discarded
      out += value.dump(-1, ' ', false, Json::error_handler_t::replace);
  }
}

std::string DumpCompactJson(const Json& value) {
  std::string out;
  out.reserve(512);
  AppendCompactJson(value, out);
  return out;
}

}  // namespace imgmcp::mcp
