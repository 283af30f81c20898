// The request headers imgmcp reads, taken from the request head exactly as the client sent it, in
// one pass and without allocating. cpp-httplib percent-decodes header values before handlers see
// them, so through it "Mcp-Name: reset%5Fsession" would pass for reset_session while a proxy that
// denies reset_session sees something else; and it keeps the first of two lines where a proxy may
// use the last. Every header a route reads comes from here instead, byte for byte, and the routes
// refuse a second line of the ones that must be single (mcp_routes.cpp). No I/O, no httplib:
// unit-tested directly.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace imgmcp::http {

// The headers imgmcp reads; every other header line is skipped.
enum class Header : uint8_t {
  kHost,
  kOrigin,
  kAuthorization,
  kAccept,
  kContentType,
  kContentLength,
  kTransferEncoding,
  kMcpSessionId,
  kMcpProtocolVersion,
  kMcpMethod,
  kMcpName,
  kLastEventId,
  kTraceParent,
  // Mcp-Param-<Name>: a tool argument mirrored into a header (SEP-2243), any <Name>; read with
  // RequestHeaders::GetParam.
  kMcpParam,
};
// The header's name as the specifications spell it ("MCP-Protocol-Version"; "Mcp-Param-" for
// kMcpParam).
std::string_view HeaderName(Header header);

class RequestHeaders {
 public:
  // At most this many lines of the headers above; a head with more is malformed.
  static constexpr size_t kMaxLines = 32;

  // Reads `head` (the request line, header lines and the blank line). The values are views into
  // `head`, which must outlive this object.
  static RequestHeaders Parse(std::string_view head);

  // What makes the head unusable, when something does (a header line that is not "name: value"
  // with a token for a name, a control character in a line, too many lines); nullptr when none.
  const char* problem() const { return problem_; }
  // The value of the first `header` line, without surrounding spaces and tabs; nullopt when the
  // header is absent.
  std::optional<std::string_view> Get(Header header) const;
  // How many lines of `header` the head has.
  size_t Count(Header header) const;
  // The value of the `index`-th line of `header` (for headers that may repeat, e.g. Accept).
  std::optional<std::string_view> Get(Header header, size_t index) const;
  // The Mcp-Param-<name> lines (`name` compared without regard to case): how many, and the first
  // one's value (without surrounding spaces and tabs; nullopt when there is none).
  size_t CountParam(std::string_view name) const;
  std::optional<std::string_view> GetParam(std::string_view name) const;
  // The first header of `headers` that has more than one line; nullopt when none does.
  template <size_t N>
  std::optional<Header> Repeated(const std::array<Header, N>& headers) const {
    for (Header h : headers) {
      if (Count(h) > 1) return h;
    }
    return std::nullopt;
  }

 private:
  struct Line {
    Header header;
    std::string_view value;
    std::string_view param;  // kMcpParam: the <Name> after "Mcp-Param-"
  };
  std::array<Line, kMaxLines> lines_{};
  size_t size_ = 0;
  const char* problem_ = nullptr;
};

}  // namespace imgmcp::http
