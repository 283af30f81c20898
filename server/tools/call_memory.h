// What an image call holds in memory while it runs, for its lease on --max-inflight-mb
// (docs/design.md §6): the encoded images it reads and sends, what the backend holds (the local
// engine's frames, ImageBackend::GenerateMemory / EditMemory, or the answer of a remote backend),
// and the image block of its result; and MemoryLeases, which charges that to the budget.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "common/byte_budget.h"
#include "common/result.h"
#include "imaging/codec.h"
#include "imaging/image_backend.h"
#include "server/tools/image_input.h"
#include "server/tools/tool_args.h"
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

// The leases image calls take on the memory budget (--max-inflight-mb): each before it holds what
// it leases, sized by the rules above. Thread-safe. The backend and the input resolver must
// outlive it.
class MemoryLeases {
 public:
  // max_bytes 0: no limit. `chain_turns`: the earlier turns a context "chain" edit replays at most.
  MemoryLeases(size_t max_bytes, const imaging::ImageBackend& backend,
               const ImageInputResolver& inputs, const imaging::DecodeLimits& limits,
               int chain_turns);

  // A lease for `what` (a call), taken before the images it reads before its turn (`inputs`) are
  // read: their bytes and base64 (EncodedBytes), and `work`, what its backend call and result
  // will hold (WorkBytes) as far as that is known.
  Result<ByteBudget::Lease> Lease(const std::string& what,
                                  const std::vector<const ImageInputArg*>& inputs, size_t work);
  // generate_image's lease, with its references read into `references` under it: the local
  // engine's work grows once their sizes are known (it decodes them).
  Result<ByteBudget::Lease> LeaseGeneration(const GenerateImageArgs& args,
                                            const imaging::GenerationOptions& options,
                                            std::vector<imaging::EncodedImage>* references);
  // In an edit's turn, added to its lease: the stored base it sends (`stored_bytes`; 0 for an
  // outside image, leased with the references before the turn) and, for context "chain", up to
  // chain_turns earlier turns of about its size, and the work of an edit of a `base`-sized image.
  Status ExtendForEdit(ByteBudget::Lease& lease, const EditImageArgs& args, imaging::ImageSize base,
                       size_t stored_bytes, const imaging::GenerationOptions& options) const;

 private:
  // What the backend holds for a call (the local engine's estimate, else a remote answer's
  // allowance, RemoteAnswerMemory). `references`: the generation's, once read.
  imaging::WorkMemory GenerateWork(const imaging::GenerationOptions& options,
                                   const std::vector<imaging::EncodedImage>& references) const;
  imaging::WorkMemory EditWork(const std::string& instruction, imaging::ImageSize base,
                               const imaging::GenerationOptions& options) const;

  ByteBudget budget_;
  const imaging::ImageBackend& backend_;
  const ImageInputResolver& inputs_;
  const imaging::DecodeLimits limits_;
  const int chain_turns_;
};

}  // namespace imgmcp::tools
