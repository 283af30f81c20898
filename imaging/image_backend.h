// ImageBackend: the seam between the tools and whatever makes pixels (Gemini or the offline engine).
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "common/cancellation.h"
#include "common/result.h"

namespace imgmcp::imaging {

// Encoded image bytes with the MIME type sniffed from their magic numbers (never from a label).
struct EncodedImage {
  std::string bytes;
  std::string mime_type;  // "image/png", "image/jpeg", "image/webp", "image/gif"
};

struct GenerateRequest {
  std::string prompt;
  std::string aspect_ratio = "1:1";  // one of 1:1 2:3 3:2 3:4 4:3 4:5 5:4 9:16 16:9 21:9
  std::vector<EncodedImage> references;
};

struct EditRequest {
  std::string prompt;
  EncodedImage base;
  std::vector<EncodedImage> references;
};

// What a backend produced: the image exactly as returned, plus any text the model added.
struct BackendImage {
  std::string bytes;
  std::string mime_type;  // sniffed from bytes
  std::string text;
};

// Per-call context: cancellation, an overall deadline and a progress callback
// (e.g. "retrying in 4 s (429)"). The callback may be empty.
struct CallContext {
  CancellationToken cancel;
  std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max();
  std::function<void(const std::string& message)> on_progress;
};

class ImageBackend {
 public:
  virtual ~ImageBackend() = default;
  virtual std::string Name() const = 0;   // "gemini" or "local"
  virtual std::string Model() const = 0;  // e.g. "gemini-3.1-flash-lite-image", "imgmcp-local-1"
  virtual Result<BackendImage> Generate(const GenerateRequest& request, const CallContext& ctx) = 0;
  virtual Result<BackendImage> Edit(const EditRequest& request, const CallContext& ctx) = 0;
};

}  // namespace imgmcp::imaging
