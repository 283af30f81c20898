// Splits a byte stream into newline-delimited messages (stdio framing, docs/design.md §2).
//
// Chunks may split a message anywhere; one chunk may hold many messages. "\r\n" is accepted, blank
// lines are skipped. A line longer than `max_line_bytes` is refused as soon as it is known to be
// too long: OnOversize fires once, the bytes seen so far are dropped, and the rest of that line is
// skipped without being buffered; the stream resyncs at the next newline.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

namespace imgmcp::mcp {

class LineSplitter {
 public:
  using LineCallback = std::function<void(std::string_view line)>;
  using OversizeCallback = std::function<void()>;

  LineSplitter(size_t max_line_bytes, LineCallback on_line, OversizeCallback on_oversize);

  void Feed(std::string_view chunk);
  // End of stream: a final line without a newline is still delivered.
  void Finish();

 private:
  void Deliver(std::string_view line);

  const size_t max_line_bytes_;
  LineCallback on_line_;
  OversizeCallback on_oversize_;
  std::string partial_;      // the current line's bytes so far (when not discarding)
  bool discarding_ = false;  // inside an oversize line, skipping to its newline
};

}  // namespace imgmcp::mcp
