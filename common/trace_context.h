// W3C Trace Context (https://www.w3.org/TR/trace-context/): the `traceparent` a client sends in
// a request's params._meta or as an HTTP header, carried into the log lines of that call
// (common/log.h) and passed on to Gemini with a span id of imgmcp's own.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace imgmcp {

struct TraceParent {
  std::string trace_id;   // 32 lowercase hex digits, not all zero
  std::string parent_id;  // 16 lowercase hex digits, not all zero
  std::string flags;      // 2 lowercase hex digits
};

// "00-<trace-id>-<parent-id>-<flags>" as the specification defines it (version 00; a later
// version is read by its first four fields when longer text follows a dash). Anything else —
// wrong lengths, upper-case or non-hex digits, all-zero ids, version ff — is nullopt: an invalid
// traceparent is ignored, never an error.
std::optional<TraceParent> ParseTraceParent(std::string_view text);

// The traceparent of a call made on behalf of `parent`: the same trace id and flags, a fresh
// random span id.
std::string ChildTraceParent(const TraceParent& parent);

}  // namespace imgmcp
