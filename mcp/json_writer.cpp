#include "mcp/json_writer.h"

#include <array>
#include <charconv>
#include <cmath>
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

// How dump() writes each ASCII byte inside a string: 0 = as it is (DEL included), 2 = a
// two-character escape (\" \\ \b \f \n \r \t), 6 = \u00xx.
constexpr std::array<unsigned char, 128> kEscapeWidth = [] {
  std::array<unsigned char, 128> width{};
  for (int c = 0; c < 0x20; ++c) width[c] = 6;
  for (char c : {'"', '\\', '\b', '\f', '\n', '\r', '\t'}) width[static_cast<unsigned char>(c)] = 2;
  return width;
}();

// Appends an ASCII string as dump() writes it (false, appending nothing, for any other string): '"'
// and '\' escaped, the control characters as \b \f \n \r \t or \u00xx, everything else as it is.
// Measures first, then writes into room made once (the text block of a tool result escapes a quote
// or a newline every few bytes).
bool AppendAsciiString(std::string_view s, std::string& out) {
  size_t extra = 0;
  unsigned high = 0;
  for (unsigned char c : s) {
    high |= c;
    extra += kEscapeWidth[c & 0x7f] == 0 ? 0 : kEscapeWidth[c & 0x7f] - 1;
  }
  if (high >= 0x80) return false;
  const size_t at = out.size();
  out.resize(at + s.size() + extra + 2);
  char* p = out.data() + at;
  *p++ = '"';
  if (extra == 0) {
    std::memcpy(p, s.data(), s.size());
    p += s.size();
  } else {
    static constexpr char kHex[] = "0123456789abcdef";
    for (unsigned char c : s) {
      switch (kEscapeWidth[c]) {
        case 0:
          *p++ = static_cast<char>(c);
          break;
        case 2:
          *p++ = '\\';
          *p++ = c == '\b'   ? 'b'
                 : c == '\f' ? 'f'
                 : c == '\n' ? 'n'
                 : c == '\r' ? 'r'
                 : c == '\t' ? 't'
                             : static_cast<char>(c);  // '"' and '\\' stand for themselves
          break;
        default:
          p[0] = '\\';
          p[1] = 'u';
          p[2] = '0';
          p[3] = '0';
          p[4] = kHex[c >> 4];
          p[5] = kHex[c & 0xf];
          p += 6;
      }
    }
  }
  *p = '"';
  return true;
}

// A string as dump() writes it. Non-ASCII text goes through nlohmann, which checks its UTF-8 and
// replaces invalid bytes.
void AppendString(const std::string& s, std::string& out) {
  if (s.size() >= kVerbatimMinChars && NeedsNoEscaping(s)) {
    out.reserve(out.size() + s.size() + 64);
    out += '"';
    out += s;
    out += '"';
  } else if (!AppendAsciiString(s, out)) {
    out += Json(s).dump(-1, ' ', false, Json::error_handler_t::replace);
  }
}

template <typename Integer>
void AppendInteger(Integer value, std::string& out) {
  char digits[24];
  const auto [end, ec] = std::to_chars(digits, digits + sizeof digits, value);
  out.append(digits, end);
}

// A double as dump() writes it: null when not finite, else nlohmann's own shortest round-trip text
// (the function its serializer calls), without building a serializer for each number.
void AppendDouble(double value, std::string& out) {
  if (!std::isfinite(value)) {
    out += "null";
    return;
  }
  std::array<char, 64> text{};
  const char* end = nlohmann::detail::to_chars(text.data(), text.data() + text.size(), value);
  out.append(text.data(), static_cast<size_t>(end - text.data()));
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
    case Json::value_t::number_float:
      return AppendDouble(value.get<Json::number_float_t>(), out);
    default:  // binary, discarded
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
