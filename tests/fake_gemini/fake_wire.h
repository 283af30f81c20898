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
// 3.x image models attach thoughtSignature to parts and require them on replayed model images.
bool UsesThoughtSignatures(std::string_view model);

struct ParsedRequest {
  std::string prompt;  // text parts of the last user turn, joined with spaces
  // Images of the last user turn in order; when it has none, the newest image of earlier turns
  // (a chat's previous model answer), so a second chat turn edits the previous result.
  std::vector<imaging::EncodedImage> images;
  std::string aspect_ratio;  // "" when imageConfig.aspectRatio is absent
  bool want_text = true;     // responseModalities contains TEXT (or is absent)
  Json logged_body;          // the request with every base64 string replaced by its size
  Json image_log;            // [{declared_mime_type, sniffed_mime_type, bytes, role}]
};

// Validates a request body. Errors carry Google's 400 message text (INVALID_ARGUMENT).
Result<ParsedRequest> ParseRequest(std::string_view body, std::string_view model);

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
  std::string block_reason;  // when set: promptFeedback only, no candidates
  int prompt_tokens = 0;
};

// A GenerateContentResponse in camelCase with responseId, modelVersion and usageMetadata.
std::string BuildResponse(const ResponseSpec& spec);

}  // namespace imgmcp::fake_gemini
