// ImageBackend: the seam between the tools and whatever makes pixels (Gemini or the offline
// engine).
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <stop_token>
#include <string>
#include <vector>

#include "common/json.h"
#include "common/result.h"
#include "imaging/generation_params.h"

namespace imgmcp::imaging {

// Encoded image bytes with the MIME type sniffed from their magic numbers (never from a label).
struct EncodedImage {
  std::string bytes;
  std::string mime_type;  // "image/png", "image/jpeg", "image/webp", "image/gif"
};

// Model, image_size, aspect_ratio ("" = 1:1 for a generation; edits keep the base image's ratio),
// thinking and search, already checked with CheckGenerationOptions against the backend's Models().
struct GenerateRequest {
  std::string prompt;
  std::vector<EncodedImage> references;
  GenerationOptions options;
};

// One earlier turn of a conversational edit (context "chain"), oldest first in EditRequest::chain.
struct ChainTurn {
  std::string user_text;                   // the instruction (or generation prompt) of that turn
  std::optional<EncodedImage> user_image;  // the image sent with it, when the turn sent one
  std::string replay;                      // the backend's BackendImage::replay of its answer
  EncodedImage image;                      // the answer's image: the version's stored bytes
};

struct EditRequest {
  std::string prompt;
  EncodedImage base;
  std::vector<EncodedImage> references;
  GenerationOptions options;
  // Context "chain": earlier turns to replay before the instruction. When non-empty, the last
  // turn's image is the base (`base` holds the same bytes) and the backend sends it as that
  // turn's answer rather than beside the instruction.
  std::vector<ChainTurn> chain;
};

// A grounding source the model used (search).
struct Source {
  std::string title;
  std::string uri;
};

// What a backend produced: the image exactly as returned, plus what the model said about it.
struct BackendImage {
  std::string bytes;
  std::string mime_type;  // sniffed from bytes
  std::string text;       // the model's own (non-thought) text, if any
  Json usage;             // token counts as the backend reported them; null when none
  std::string finish_reason;
  std::vector<Source> sources;
  int64_t grounding_queries = 0;  // Google Search queries the answer ran (what search costs)
  // Opaque to everyone but the backend: what a later chain request needs to replay this answer
  // exactly (every part and signature), without the image bytes, which the caller keeps (the
  // version's file) and hands back in ChainTurn::image. "" when there is nothing to replay.
  std::string replay;
  // What its tokens cost against the model's prices: 1, or the model's batch_price_factor for the
  // answer of a Gemini batch job.
  double price_factor = 1;
};

// Per-call context: cancellation, an overall deadline and a progress callback
// (e.g. "retrying in 4 s (429)"). The callback may be empty.
struct CallContext {
  std::stop_token cancel;
  std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max();
  std::function<void(const std::string& message)> on_progress;
  std::string
      traceparent;  // the client's W3C traceparent, "" if none: a remote backend passes it on
};

// What one backend call holds in this process, for the lease the tools take on --max-inflight-mb
// before it runs (docs/design.md §6). The encoded inputs are not in it: the tools count those.
struct WorkMemory {
  size_t peak = 0;    // bytes held at once while the backend works, the answer it makes included
  size_t answer = 0;  // the answer's bytes, which the call holds after the backend has returned
  imaging::ImageSize output;  // the answer's size in pixels
};

class ImageBackend {
 public:
  virtual ~ImageBackend() = default;
  virtual std::string Name() const = 0;   // "gemini" or "local"
  virtual std::string Model() const = 0;  // e.g. "gemini-3.1-flash-lite-image", "imgmcp-local-1"
  // The models this backend offers, the default (Model()) first, each with what it supports:
  // the one table that tool schemas, validation and request building read.
  virtual const std::vector<ModelCapabilities>& Models() const = 0;
  // Why Models() does not hold `model`, said when a call asks for it: e.g. "model … was retired
  // on …; use … instead", or "Vertex AI location us-central1 serves only …"; empty by default.
  virtual std::string ModelNote(const std::string& model) const {
    (void)model;
    return {};
  }
  virtual Result<BackendImage> Generate(const GenerateRequest& request, const CallContext& ctx) = 0;
  virtual Result<BackendImage> Edit(const EditRequest& request, const CallContext& ctx) = 0;
  // Checks an edit instruction before anything is committed or sent: a model takes any text (the
  // default); the local backend only its vocabulary. kInvalidArgument says what is wrong.
  virtual Status CheckEditInstruction(const std::string& instruction) const {
    (void)instruction;
    return Status::Ok();
  }
  // What a Generate (with reference images of these sizes) or an Edit (of a base of that size)
  // holds at its peak in this process, for a backend that works here (the local engine); nullopt
  // for one whose work is elsewhere (a remote model: the tools allow for its answer instead).
  virtual std::optional<WorkMemory> GenerateMemory(const GenerationOptions& options,
                                                   const std::vector<ImageSize>& references) const {
    return std::nullopt;
  }
  virtual std::optional<WorkMemory> EditMemory(const std::string& instruction, ImageSize base,
                                               const GenerationOptions& options) const {
    return std::nullopt;
  }
};

}  // namespace imgmcp::imaging
