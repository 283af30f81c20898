#include "mcp/line_reader.h"

#include <cstring>
#include <utility>

namespace imgmcp::mcp {

namespace {
// After a huge message, give the memory back rather than keep a 64 MiB buffer around.
constexpr size_t kKeepCapacity = 1 << 20;

bool IsBlank(std::string_view line) {
  return line.find_first_not_of(" \t\r") == std::string_view::npos;
}
}  // namespace

LineSplitter::LineSplitter(size_t max_line_bytes, LineCallback on_line,
                           OversizeCallback on_oversize)
    : max_line_bytes_(max_line_bytes),
      on_line_(std::move(on_line)),
      on_oversize_(std::move(on_oversize)) {}

void LineSplitter::Feed(std::string_view chunk) {
  size_t pos = 0;
  while (pos < chunk.size()) {
    const void* hit = std::memchr(chunk.data() + pos, '\n', chunk.size() - pos);
    const size_t end = hit ? static_cast<const char*>(hit) - chunk.data() : chunk.size();
    const std::string_view piece = chunk.substr(pos, end - pos);
    pos = hit ? end + 1 : chunk.size();

    if (discarding_) {
      if (hit) discarding_ = false;  // resynced
      continue;
    }
    // +1 leaves room for the '\r' of a "\r\n" line of exactly max_line_bytes.
    if (partial_.size() + piece.size() > max_line_bytes_ + 1) {
      std::string().swap(partial_);
      discarding_ = !hit;
      on_oversize_();
      continue;
    }
    if (!hit) {
      partial_.append(piece);
      continue;
    }
    if (partial_.empty()) {
      Deliver(piece);  // the whole line is inside this chunk: no copy
    } else {
      partial_.append(piece);
      Deliver(partial_);
      partial_.clear();
      if (partial_.capacity() > kKeepCapacity) std::string().swap(partial_);
    }
  }
}

void LineSplitter::Finish() {
  if (!discarding_ && !partial_.empty()) Deliver(partial_);
  std::string().swap(partial_);
  discarding_ = false;
}

void LineSplitter::Deliver(std::string_view line) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  if (line.size() > max_line_bytes_) {
    on_oversize_();
    return;
  }
  if (IsBlank(line)) return;
  on_line_(line);
}

}  // namespace imgmcp::mcp
