// The fake's side of Gemini's wire format: validating generateContent requests the way Google
// does (camelCase or snake_case, unknown fields rejected) and building camelCase responses.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/json.h"
#include "common/result.h"
#include "imaging/image_backend.h"

namespace imgmcp::fake_gemini {

// Model ids the fake serves; anything else is 404.
bool IsKnownModel(std::string_view model);
// 3.x image models (Nano Banana 2.1 too) attach thoughtSignature to parts and require them on
// replayed model images.
bool UsesThoughtSignatures(std::string_view model);
// 3 Pro answers always start with a thought part.
bool AlwaysThinks(std::string_view model);
// Output tokens of one image of `image_size` ("" = 1K) from `model`.
int ImageTokens(std::string_view model, std::string_view image_size);
// Thought tokens an answer of `model` reports for `thinking_level` ("" | "MINIMAL" | "LOW" |
// "MEDIUM" | "HIGH"): more for a higher level; 3 Pro thinks without one; 0 otherwise.
int ThoughtTokens(std::string_view model, std::string_view thinking_level);
// Prompt tokens of one input image.
int InputImageTokens();

// A thoughtSignature for a part of kind "text" or "image" with `content` (the text, or the image
// bytes) from `model`: a nonce and an HMAC under a key of this process, so it verifies only for
// the same model, kind and content, in the fake process that issued it.
std::string SignPart(std::string_view model, std::string_view kind, std::string_view content);
bool VerifySignature(std::string_view model, std::string_view kind, std::string_view content,
                     std::string_view signature);

struct ParsedRequest {
  std::string prompt;  // text parts of the last user turn, joined with spaces
  // Images of the last user turn in order; when it has none, the newest image of earlier turns
  // (a chat's previous model answer), so a second chat turn edits the previous result.
  std::vector<imaging::EncodedImage> images;
  std::string aspect_ratio;    // "" when imageConfig.aspectRatio is absent
  std::string image_size;      // "" when imageConfig.imageSize is absent
  std::string thinking_level;  // "" | "MINIMAL" | "LOW" | "MEDIUM" | "HIGH" (as the model takes)
  bool search = false;         // tools [{google_search:{}}]
  bool want_text = true;       // responseModalities contains TEXT (or is absent)
  Json logged_body;            // the request with every base64 string replaced by its size
  // [{declared_mime_type, sniffed_mime_type, bytes, sha256, role, content}]
  Json image_log;
  // One entry per content: {role, texts (non-thought), images, signatures (verified)}.
  Json turns = Json::array();
};

// Validates a request body for `model` with the real API's rules: unknown fields, per-model
// image sizes, aspect ratios, thinking levels (each model its own) and search grounding, and on 3.x
// models the thoughtSignature of every replayed model part (missing or not matching its part: 400
// "Image part is missing a thought_signature in content position C, part position P."). Errors
// carry Google's 400 message text (INVALID_ARGUMENT); `signature_problem` (optional) receives
// "missing" or "altered" when a signature was the reason.
Result<ParsedRequest> ParseRequest(std::string_view body, std::string_view model,
                                   std::string* signature_problem = nullptr);

// The Content-Type of every JSON answer.
inline constexpr char kJson[] = "application/json; charset=UTF-8";

// {"error":{code,message,status[,details]}} as Google sends it.
std::string ErrorBody(int code, std::string_view message, std::string_view status,
                      const Json& details = Json());
std::string DefaultApiStatus(int http_status);     // e.g. 503 → "UNAVAILABLE"
std::string DefaultErrorMessage(int http_status);  // e.g. 503 → "The model is overloaded…"

struct ResponseSpec {
  std::string model;
  int thought_parts = 0;
  std::string draft_png;               // the image used for thought image parts
  std::string text;                    // "" → no text part
  const std::string* image = nullptr;  // bytes of the final image, or none
  std::string image_label;             // mimeType written next to it
  std::string finish_reason = "STOP";
  std::string finish_message;
  std::string block_reason;    // when set: promptFeedback only, no candidates
  int prompt_text_tokens = 0;  // promptTokenCount is these and the images'
  int prompt_image_tokens = 0;
  int image_tokens = 1120;      // the image's part of candidatesTokenCount
  int thoughts_tokens = 0;      // thoughtsTokenCount, besides 40 for each thought part
  std::string grounding_query;  // when set: groundingMetadata for a search of this text
};

// A GenerateContentResponse in camelCase with responseId, modelVersion and usageMetadata (the
// counts, promptTokensDetails and candidatesTokensDetails by modality).
std::string BuildResponse(const ResponseSpec& spec);

}  // namespace imgmcp::fake_gemini
