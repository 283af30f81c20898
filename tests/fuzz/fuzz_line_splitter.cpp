// Fuzzes stdio framing (mcp::LineSplitter) differentially: whatever the chunking, the lines and
// "oversize" events must be exactly those of a simple whole-buffer reference splitter.
//
// Input: byte 0 picks the line limit (1..64), byte 1 seeds the chunk sizes; the rest is the
// stream.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "mcp/line_reader.h"

namespace {

constexpr char kOversize[] = "\x01<oversize>";

bool IsBlank(std::string_view line) {
  return line.find_first_not_of(" \t\r") == std::string_view::npos;
}

// The documented semantics over the whole stream at once.
std::vector<std::string> Reference(std::string_view stream, size_t max) {
  std::vector<std::string> events;
  size_t pos = 0;
  while (pos < stream.size()) {
    size_t end = stream.find('\n', pos);
    if (end == std::string_view::npos) end = stream.size();
    std::string_view line = stream.substr(pos, end - pos);
    pos = end + 1;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.size() > max) {
      events.emplace_back(kOversize);
    } else if (!IsBlank(line)) {
      events.emplace_back(line);
    }
  }
  return events;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  const size_t max = 1 + data[0] % 64;
  uint32_t seed = data[1] * 2654435761u + 1;
  const std::string_view stream(reinterpret_cast<const char*>(data + 2), size - 2);

  std::vector<std::string> events;
  imgmcp::mcp::LineSplitter splitter(
      max,
      [&](std::string_view line) {
        // Delivered lines never carry framing bytes.
        if (line.find('\n') != std::string_view::npos) std::abort();
        events.emplace_back(line);
      },
      [&] { events.emplace_back(kOversize); });
  size_t pos = 0;
  while (pos < stream.size()) {
    seed = seed * 1103515245u + 12345u;
    const size_t n = 1 + (seed >> 16) % 97;
    splitter.Feed(stream.substr(pos, n));
    pos += n;
  }
  splitter.Finish();
  if (events != Reference(stream, max)) std::abort();
  return 0;
}
