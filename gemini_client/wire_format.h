// Gemini generateContent wire format: request bodies and response parsing as pure functions.
// This is the only file that knows Gemini's JSON field names (inlineData, finishReason, …).
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "common/result.h"
#include "gemini_client/retry_policy.h"
#include "imaging/image_backend.h"

namespace imgmcp::gemini {

// Request body for a text-to-image call with `model`: [prompt, references…],
// imageConfig {aspectRatio (1:1 when not given), imageSize when given}, thinkingConfig
// {thinkingLevel} when thinking is given, tools [{google_search:{}}] with search. The options are
// checked against `model` first (imaging::CheckGenerationOptions). Each image's mimeType is
// sniffed from its bytes. Errors: kInvalidArgument (empty prompt, an option the model does not
// support, an image that is not PNG/JPEG/WebP).
Result<std::string> BuildGenerateRequest(const imaging::GenerateRequest& request,
                                         const imaging::ModelCapabilities& model);

// Request body for an edit. Without a chain: one user turn [instruction, base image,
// references…]; imageConfig only for imageSize (Gemini keeps the base image's ratio). With a
// chain: for each earlier turn a user content [its text, its image if it sent one] and a model
// content exactly as Gemini returned it (every part and thoughtSignature, the image part's data
// being the turn's stored bytes), then the user turn [instruction, references…].
Result<std::string> BuildEditRequest(const imaging::EditRequest& request,
                                     const imaging::ModelCapabilities& model);

// What a response said besides the image, for retries and messages.
struct ResponseInfo {
  AttemptFailure failure;     // kind kNone on success
  std::string api_status;     // error.status, e.g. "RESOURCE_EXHAUSTED"; "" if none
  std::string finish_reason;  // candidates[0].finishReason; "" if none
};

// Maps one HTTP answer (status and body) to an image or a typed, actionable error, in Google's
// documented order: HTTP status and error body, promptFeedback.blockReason, finishReason, parts
// (thought parts skipped, the last inlineData wins). The image's MIME type comes from its bytes.
// Also fills text (non-thought text parts), usage (usageMetadata as sent), finish_reason, sources
// (groundingMetadata.groundingChunks[].web) and replay (the candidate's parts, for a later chain
// request, with the final image's data left out). `info` (optional) receives what the retry
// policy needs.
Result<imaging::BackendImage> ParseGenerateResponse(int http_status, std::string_view body,
                                                    ResponseInfo* info = nullptr);

}  // namespace imgmcp::gemini
