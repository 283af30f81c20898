#include "server/tools/call_memory.h"

#include <algorithm>

namespace imgmcp::tools {
namespace {

size_t Pixels(imaging::ImageSize size) {
  return static_cast<size_t>(std::max(size.width, 0)) *
         static_cast<size_t>(std::max(size.height, 0));
}

size_t Base64Bytes(size_t bytes) { return (bytes + 2) / 3 * 4; }

// Around the image's base64 in an answer body: the JSON, the model's text, thought signatures.
constexpr size_t kAnswerEnvelope = 256u << 10;

}  // namespace

size_t EncodedBytes(size_t encoded) { return encoded + Base64Bytes(encoded); }

imaging::WorkMemory RemoteAnswerMemory(imaging::ImageSize output,
                                       const imaging::DecodeLimits& limits) {
  imaging::WorkMemory memory;
  memory.output = output;
  memory.answer = std::min<size_t>(Pixels(output) * 3,
                                   static_cast<size_t>(std::max<int64_t>(limits.max_bytes, 0)));
  const size_t body = Base64Bytes(memory.answer) + kAnswerEnvelope;
  memory.peak = 2 * body + memory.answer;
  return memory;
}

size_t WorkBytes(const imaging::WorkMemory& work, InlineMode mode) {
  size_t block = 0;
  if (mode == InlineMode::kPreview) block = Pixels(work.output) * 4;
  if (mode == InlineMode::kFull) block = Base64Bytes(work.answer);
  return std::max(work.peak, work.answer + block);
}

}  // namespace imgmcp::tools
