// What an image call holds in memory while it runs, for its lease on --max-inflight-mb
// (docs/design.md §6): the encoded images it reads and sends, what the backend holds (the local
// engine's frames, ImageBackend::GenerateMemory / EditMemory, or the answer of a remote backend),
// and the image block of its result.
#pragma once

#include <cstddef>

#include "imaging/codec.h"
#include "imaging/image_backend.h"
#include "server/tools/tool_results.h"

namespace imgmcp::tools {

// Encoded images a call holds (inputs it read, a stored base it sends): the bytes, and their
// base64 (in the request body a remote backend is sent, in the arguments they came in).
size_t EncodedBytes(size_t encoded);

// What the answer of a remote backend (Gemini, Vertex AI) holds for an image of `output` pixels.
// The answer is not known before it comes, so this is an allowance: an image of 3 bytes a pixel
// (an opaque PNG that did not compress: more than a model's answer of that size holds in
// practice), never more than limits.max_bytes (--max-image-bytes: a larger answer is refused,
// and the backend's cap on answer bodies follows it). While it is read the body holds that
// image's base64 in a buffer that grows (up to twice the body while it is copied), then the image
// decoded from it.
imaging::WorkMemory RemoteAnswerMemory(imaging::ImageSize output,
                                       const imaging::DecodeLimits& limits);

// The memory of a call's backend work and result: while the backend runs, its peak; after it,
// the answer with the result's image block (`mode`: a preview decodes the answer, one frame; the
// full image is its base64) — whichever is more.
size_t WorkBytes(const imaging::WorkMemory& work, InlineMode mode);

}  // namespace imgmcp::tools
