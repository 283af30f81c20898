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

// The aspect ratios Gemini image models accept (the 10 plus 3.1's 1:4 4:1 1:8 8:1).
bool IsSupportedAspectRatio(std::string_view aspect_ratio);

// Request body for a text-to-image call: [prompt, references…] and imageConfig.aspectRatio.
// Each image's mimeType is sniffed from its bytes. Errors: kInvalidArgument (empty prompt, bad
// aspect ratio, an image that is not PNG/JPEG/WebP).
Result<std::string> BuildGenerateRequest(const imaging::GenerateRequest& request);

// Request body for an edit: [instruction, base image, references…]; no imageConfig (Gemini keeps
// the base image's ratio).
Result<std::string> BuildEditRequest(const imaging::EditRequest& request);

// What a response said besides the image, for retries and messages.
struct ResponseInfo {
  AttemptFailure failure;     // kind kNone on success
  std::string api_status;     // error.status, e.g. "RESOURCE_EXHAUSTED"; "" if none
  std::string finish_reason;  // candidates[0].finishReason; "" if none
};

// Maps one HTTP answer (status and body) to an image or a typed, actionable error, in Google's
// documented order: HTTP status and error body, promptFeedback.blockReason, finishReason, parts
// (thought parts skipped, the last inlineData wins). The image's MIME type comes from its bytes.
// `info` (optional) receives what the retry policy needs.
Result<imaging::BackendImage> ParseGenerateResponse(int http_status, std::string_view body,
                                                    ResponseInfo* info = nullptr);

}  // namespace imgmcp::gemini
