#include "server/http/request_head.h"

#include "common/ascii.h"

namespace imgmcp::http {

namespace {

constexpr std::array<std::string_view, 14> kNames = {
    "Host",
    "Origin",
    "Authorization",
    "Accept",
    "Content-Type",
    "Content-Length",
    "Transfer-Encoding",
    "Mcp-Session-Id",
    "MCP-Protocol-Version",
    "Mcp-Method",
    "Mcp-Name",
    "Last-Event-ID",
    "traceparent",
    "Mcp-Param-",  // a prefix: Identify matches it apart
};
constexpr std::string_view kParamPrefix = "Mcp-Param-";

// RFC 9110 tchar: the characters of a header name.
bool IsTokenChar(unsigned char c) {
  if (IsAsciiAlnum(static_cast<char>(c))) return true;
  constexpr std::string_view kOthers = "!#$%&'*+-.^_`|~";
  return kOthers.find(static_cast<char>(c)) != std::string_view::npos;
}

// Which of the headers imgmcp reads `name` is; nullopt for any other.
std::optional<Header> Identify(std::string_view name) {
  if (name.size() > kParamPrefix.size() &&
      EqualsIgnoreAsciiCase(name.substr(0, kParamPrefix.size()), kParamPrefix)) {
    return Header::kMcpParam;
  }
  for (size_t i = 0; i + 1 < kNames.size(); ++i) {
    if (EqualsIgnoreAsciiCase(name, kNames[i])) return static_cast<Header>(i);
  }
  return std::nullopt;
}

// The problem with one header line (without its line end), or nullptr. Control characters other
// than a tab have no place in a header line: a lone CR or LF in one would split it differently
// for different readers.
const char* CheckLine(std::string_view line, size_t colon) {
  if (colon == std::string_view::npos || colon == 0) return "a header line is not \"name: value\"";
  for (size_t i = 0; i < colon; ++i) {
    if (!IsTokenChar(static_cast<unsigned char>(line[i]))) return "a header name is not a token";
  }
  for (size_t i = colon + 1; i < line.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(line[i]);
    if ((c < 0x20 && c != '\t') || c == 0x7f) return "a header value has a control character";
  }
  return nullptr;
}

}  // namespace

std::string_view HeaderName(Header header) { return kNames[static_cast<size_t>(header)]; }

RequestHeaders RequestHeaders::Parse(std::string_view head) {
  RequestHeaders headers;
  // Lines end at LF, as cpp-httplib reads them; a CR before it belongs to the line end.
  size_t pos = head.find('\n');  // past the request line
  while (pos != std::string_view::npos && pos + 1 < head.size()) {
    const size_t start = pos + 1;
    pos = head.find('\n', start);
    std::string_view line =
        head.substr(start, pos == std::string_view::npos ? std::string_view::npos : pos - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty()) break;  // the blank line ends the head
    const size_t colon = line.find(':');
    if (const char* problem = CheckLine(line, colon)) {
      headers.problem_ = problem;
      return headers;
    }
    const std::optional<Header> header = Identify(line.substr(0, colon));
    if (!header) continue;
    if (headers.size_ == kMaxLines) {
      headers.problem_ = "too many header lines";
      return headers;
    }
    const std::string_view param =
        *header == Header::kMcpParam ? line.substr(kParamPrefix.size(), colon - kParamPrefix.size())
                                     : std::string_view();
    headers.lines_[headers.size_++] =
        Line{*header, TrimSpacesAndTabs(line.substr(colon + 1)), param};
  }
  return headers;
}

std::optional<std::string_view> RequestHeaders::Get(Header header) const { return Get(header, 0); }

std::optional<std::string_view> RequestHeaders::Get(Header header, size_t index) const {
  for (size_t i = 0; i < size_; ++i) {
    if (lines_[i].header != header) continue;
    if (index == 0) return lines_[i].value;
    --index;
  }
  return std::nullopt;
}

size_t RequestHeaders::CountParam(std::string_view name) const {
  size_t count = 0;
  for (size_t i = 0; i < size_; ++i) {
    const bool match =
        lines_[i].header == Header::kMcpParam && EqualsIgnoreAsciiCase(lines_[i].param, name);
    count += match ? 1 : 0;
  }
  return count;
}

std::optional<std::string_view> RequestHeaders::GetParam(std::string_view name) const {
  for (size_t i = 0; i < size_; ++i) {
    if (lines_[i].header == Header::kMcpParam && EqualsIgnoreAsciiCase(lines_[i].param, name)) {
      return lines_[i].value;
    }
  }
  return std::nullopt;
}

size_t RequestHeaders::Count(Header header) const {
  size_t count = 0;
  for (size_t i = 0; i < size_; ++i) count += lines_[i].header == header ? 1 : 0;
  return count;
}

}  // namespace imgmcp::http
