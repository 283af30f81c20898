#include "tests/fake_gemini/fake_wire.h"

#include <array>
#include <set>

#include "common/base64.h"
#include "common/random.h"
#include "imaging/codec.h"

namespace imgmcp::fake_gemini {
namespace {

constexpr std::array<std::string_view, 7> kModels = {
    "gemini-3.1-flash-lite-image",    "gemini-3.1-flash-image",
    "gemini-3.1-flash-image-preview", "gemini-3-pro-image",
    "gemini-3-pro-image-preview",     "gemini-2.5-flash-image",
    "gemini-2.5-flash-image-preview"};
constexpr std::array<std::string_view, 14> kRatios = {"1:1", "2:3", "3:2",  "3:4",  "4:3",
                                                      "4:5", "5:4", "9:16", "16:9", "21:9",
                                                      "1:4", "4:1", "1:8",  "8:1"};
constexpr char kImagePlaceholder[] = "@@FAKE_GEMINI_IMAGE_DATA@@";

using Keys = std::set<std::string_view>;
const Keys kTopKeys = {"contents",          "systemInstruction", "system_instruction",
                       "safetySettings",    "safety_settings",   "tools",
                       "toolConfig",        "tool_config",       "generationConfig",
                       "generation_config", "cachedContent",     "cached_content"};
const Keys kConfigKeys = {"temperature",
                          "topP",
                          "top_p",
                          "topK",
                          "top_k",
                          "candidateCount",
                          "candidate_count",
                          "maxOutputTokens",
                          "max_output_tokens",
                          "stopSequences",
                          "stop_sequences",
                          "responseMimeType",
                          "response_mime_type",
                          "seed",
                          "presencePenalty",
                          "presence_penalty",
                          "frequencyPenalty",
                          "frequency_penalty",
                          "responseModalities",
                          "response_modalities",
                          "thinkingConfig",
                          "thinking_config",
                          "imageConfig",
                          "image_config",
                          "mediaResolution",
                          "media_resolution"};
const Keys kImageConfigKeys = {"aspectRatio", "aspect_ratio", "imageSize", "image_size"};
const Keys kContentKeys = {"role", "parts"};
const Keys kPartKeys = {"text",         "inlineData",    "inline_data",      "fileData",
                        "file_data",    "thought",       "thoughtSignature", "thought_signature",
                        "functionCall", "function_call", "functionResponse", "function_response"};
const Keys kBlobKeys = {"mimeType", "mime_type", "data", "displayName", "display_name"};

Error Invalid(const std::string& message) { return Error(ErrorCode::kInvalidArgument, message); }

Status CheckKeys(const Json& obj, const Keys& allowed, const std::string& where) {
  if (!obj.is_object()) {
    return Invalid("Invalid JSON payload received. Expected an object at '" + where + "'.");
  }
  for (const auto& [key, value] : obj.items()) {
    if (!allowed.count(key)) {
      return Invalid("Invalid JSON payload received. Unknown name \"" + key + "\"" +
                     (where.empty() ? "" : " at '" + where + "'") + ": Cannot find field.");
    }
  }
  return Status::Ok();
}

const Json* Get(const Json& obj, const char* camel, const char* snake) {
  auto it = obj.find(camel);
  if (it != obj.end()) return &*it;
  it = obj.find(snake);
  return it != obj.end() ? &*it : nullptr;
}

// Replaces long base64 strings under "data" / "thoughtSignature" with a size marker.
void Mask(Json& j) {
  if (j.is_object()) {
    for (auto& [key, value] : j.items()) {
      if ((key == "data" || key == "thoughtSignature" || key == "thought_signature") &&
          value.is_string() && value.get_ref<const std::string&>().size() > 64) {
        value = "<" + std::to_string(value.get_ref<const std::string&>().size()) + " base64 chars>";
      } else {
        Mask(value);
      }
    }
  } else if (j.is_array()) {
    for (Json& v : j) Mask(v);
  }
}

}  // namespace

bool IsKnownModel(std::string_view model) {
  for (auto m : kModels) {
    if (m == model) return true;
  }
  return false;
}

bool UsesThoughtSignatures(std::string_view model) { return model.rfind("gemini-3", 0) == 0; }

Result<ParsedRequest> ParseRequest(std::string_view body, std::string_view model) {
  Json doc = Json::parse(body.begin(), body.end(), nullptr, false);
  if (doc.is_discarded()) {
    return Invalid("Invalid JSON payload received. Unexpected token.");
  }
  if (Status s = CheckKeys(doc, kTopKeys, ""); !s.ok()) return s.error();
  ParsedRequest out;

  const Json* contents = doc.contains("contents") ? &doc["contents"] : nullptr;
  if (contents == nullptr || !contents->is_array() || contents->empty()) {
    return Invalid("* GenerateContentRequest.contents: contents is not specified");
  }
  std::vector<imaging::EncodedImage> history_images;
  for (size_t c = 0; c < contents->size(); ++c) {
    const Json& content = (*contents)[c];
    const std::string where = "contents[" + std::to_string(c) + "]";
    if (Status s = CheckKeys(content, kContentKeys, where); !s.ok()) return s.error();
    std::string role = "user";
    if (content.contains("role")) {
      if (!content["role"].is_string()) return Invalid("Invalid value at '" + where + ".role'");
      role = content["role"].get<std::string>();
    }
    if (role != "user" && role != "model") {
      return Invalid("Please use a valid role: user, model.");
    }
    const bool last = c + 1 == contents->size();
    if (last && role != "user") {
      return Invalid("Please ensure that the last content is from the user (role \"user\").");
    }
    if (!content.contains("parts") || !content["parts"].is_array() || content["parts"].empty()) {
      return Invalid("* GenerateContentRequest." + where +
                     ".parts: contents.parts must not be empty.");
    }
    const Json& parts = content["parts"];
    std::vector<imaging::EncodedImage> turn_images;
    std::string turn_text;
    for (size_t p = 0; p < parts.size(); ++p) {
      const Json& part = parts[p];
      const std::string pwhere = where + ".parts[" + std::to_string(p) + "]";
      if (Status s = CheckKeys(part, kPartKeys, pwhere); !s.ok()) return s.error();
      const bool thought =
          part.contains("thought") && part["thought"].is_boolean() && part["thought"].get<bool>();
      if (const Json* text = Get(part, "text", "text"); text != nullptr) {
        if (!text->is_string()) return Invalid("Invalid value at '" + pwhere + ".text'");
        if (!thought) {
          if (!turn_text.empty()) turn_text += ' ';
          turn_text += text->get<std::string>();
        }
      }
      const Json* blob = Get(part, "inlineData", "inline_data");
      if (blob == nullptr) continue;
      if (Status s = CheckKeys(*blob, kBlobKeys, pwhere + ".inline_data"); !s.ok())
        return s.error();
      const Json* mime = Get(*blob, "mimeType", "mime_type");
      const Json* data = Get(*blob, "data", "data");
      if (mime == nullptr || !mime->is_string() || data == nullptr || !data->is_string()) {
        return Invalid("Invalid value at '" + pwhere +
                       ".inline_data': mime_type and data are required.");
      }
      const std::string declared = mime->get<std::string>();
      static const Keys kAccepted = {"image/png", "image/jpeg", "image/webp", "image/heic",
                                     "image/heif"};
      if (!kAccepted.count(declared)) {
        return Invalid("Unsupported MIME type: " + declared);
      }
      auto bytes = Base64Decode(data->get_ref<const std::string&>());
      if (!bytes.ok()) {
        return Invalid("Invalid value at '" + pwhere +
                       ".inline_data.data' (TYPE_BYTES), Base64 decoding failed");
      }
      if (role == "model" && !thought && UsesThoughtSignatures(model) &&
          Get(part, "thoughtSignature", "thought_signature") == nullptr) {
        return Invalid("Image part is missing a thought_signature in content position " +
                       std::to_string(c + 1) + ", part position " + std::to_string(p + 1) + ".");
      }
      const imaging::ImageFormat format = imaging::SniffFormat(*bytes);
      out.image_log.push_back({{"declared_mime_type", declared},
                               {"sniffed_mime_type", imaging::MimeTypeOf(format)},
                               {"bytes", bytes->size()},
                               {"role", role}});
      if (!thought) {
        imaging::EncodedImage image;
        image.mime_type = imaging::MimeTypeOf(format);
        image.bytes = std::move(bytes).value();
        turn_images.push_back(std::move(image));
      }
    }
    if (last) {
      out.prompt = turn_text;
      out.images = std::move(turn_images);
    } else if (!turn_images.empty()) {
      history_images.clear();
      history_images.push_back(std::move(turn_images.back()));
    }
  }
  if (out.images.empty() && !history_images.empty()) out.images = std::move(history_images);

  if (const Json* config = Get(doc, "generationConfig", "generation_config"); config != nullptr) {
    if (Status s = CheckKeys(*config, kConfigKeys, "generation_config"); !s.ok()) return s.error();
    if (const Json* n = Get(*config, "candidateCount", "candidate_count"); n != nullptr) {
      if (!n->is_number_integer())
        return Invalid("Invalid value at 'generation_config.candidate_count'");
      if (n->get<int64_t>() > 1)
        return Invalid("Multiple candidates is not enabled for this model");
    }
    if (const Json* m = Get(*config, "responseModalities", "response_modalities"); m != nullptr) {
      if (!m->is_array() || m->empty()) {
        return Invalid("Invalid value at 'generation_config.response_modalities'");
      }
      bool image = false;
      out.want_text = false;
      for (const Json& v : *m) {
        if (!v.is_string())
          return Invalid("Invalid value at 'generation_config.response_modalities'");
        const std::string s = v.get<std::string>();
        if (s == "TEXT") {
          out.want_text = true;
        } else if (s == "IMAGE") {
          image = true;
        } else {
          return Invalid("Invalid value at 'generation_config.response_modalities' (" + s + ")");
        }
      }
      if (!image) return Invalid("This model only supports responses with IMAGE modality.");
    }
    if (const Json* ic = Get(*config, "imageConfig", "image_config"); ic != nullptr) {
      if (Status s = CheckKeys(*ic, kImageConfigKeys, "generation_config.image_config"); !s.ok()) {
        return s.error();
      }
      if (const Json* ar = Get(*ic, "aspectRatio", "aspect_ratio"); ar != nullptr) {
        bool ok = ar->is_string();
        if (ok) {
          ok = false;
          for (auto r : kRatios) ok = ok || r == ar->get_ref<const std::string&>();
        }
        if (!ok) return Invalid("Unsupported aspect ratio: " + ar->dump());
        out.aspect_ratio = ar->get<std::string>();
      }
      if (const Json* size = Get(*ic, "imageSize", "image_size"); size != nullptr) {
        const bool lite =
            model == "gemini-3.1-flash-lite-image" || model.rfind("gemini-2.5", 0) == 0;
        if (!size->is_string() || (lite && size->get<std::string>() != "1K") ||
            (!lite && size->get<std::string>() != "1K" && size->get<std::string>() != "2K" &&
             size->get<std::string>() != "4K" && size->get<std::string>() != "512")) {
          return Invalid("Unsupported image size " + size->dump() + " for model " +
                         std::string(model));
        }
      }
    }
  }
  Mask(doc);
  out.logged_body = std::move(doc);
  return out;
}

std::string DefaultApiStatus(int http_status) {
  switch (http_status) {
    case 400:
      return "INVALID_ARGUMENT";
    case 401:
      return "UNAUTHENTICATED";
    case 402:
      return "RESOURCE_EXHAUSTED";
    case 403:
      return "PERMISSION_DENIED";
    case 404:
      return "NOT_FOUND";
    case 408:
      return "DEADLINE_EXCEEDED";
    case 409:
      return "ABORTED";
    case 429:
      return "RESOURCE_EXHAUSTED";
    case 500:
      return "INTERNAL";
    case 501:
      return "UNIMPLEMENTED";
    case 503:
      return "UNAVAILABLE";
    case 504:
      return "DEADLINE_EXCEEDED";
    default:
      return http_status >= 500 ? "UNKNOWN" : "FAILED_PRECONDITION";
  }
}

std::string DefaultErrorMessage(int http_status) {
  switch (http_status) {
    case 400:
      return "Request contains an invalid argument.";
    case 402:
      return "Your prepaid credits are depleted. Please add credits to continue.";
    case 403:
      return "The caller does not have permission";
    case 404:
      return "Requested entity was not found.";
    case 408:
      return "Request timed out.";
    case 429:
      return "You exceeded your current quota, please check your plan and billing details.";
    case 500:
      return "An internal error has occurred. Please retry or report in "
             "https://developers.generativeai.google/guide/troubleshooting";
    case 502:
      return "Bad Gateway";
    case 503:
      return "The model is overloaded. Please try again later.";
    case 504:
      return "The request timed out. Please try again.";
    default:
      return "Error " + std::to_string(http_status);
  }
}

std::string ErrorBody(int code, std::string_view message, std::string_view status,
                      const Json& details) {
  Json error = {{"code", code}, {"message", message}, {"status", status}};
  if (details.is_array() && !details.empty()) error["details"] = details;
  return Json{{"error", error}}.dump(2);
}

std::string BuildResponse(const ResponseSpec& spec) {
  const bool signatures = UsesThoughtSignatures(spec.model);
  auto signature = [] { return Base64Encode(RandomHex(24)); };
  Json doc = Json::object();
  int candidate_tokens = 0;
  if (!spec.block_reason.empty()) {
    doc["promptFeedback"] = {{"blockReason", spec.block_reason}};
  } else {
    Json parts = Json::array();
    for (int i = 0; i < spec.thought_parts; ++i) {
      if (i % 2 == 0) {
        parts.push_back({{"text", "**Planning the image**\n\nThinking about step " +
                                      std::to_string(i + 1) + "."},
                         {"thought", true}});
      } else {
        parts.push_back(
            {{"inlineData", {{"mimeType", "image/png"}, {"data", Base64Encode(spec.draft_png)}}},
             {"thought", true}});
      }
    }
    if (!spec.text.empty()) {
      Json part = {{"text", spec.text}};
      if (signatures) part["thoughtSignature"] = signature();
      parts.push_back(std::move(part));
      candidate_tokens += 12;
    }
    if (spec.image != nullptr) {
      Json part = {{"inlineData", {{"mimeType", spec.image_label}, {"data", kImagePlaceholder}}}};
      if (signatures) part["thoughtSignature"] = signature();
      parts.push_back(std::move(part));
      candidate_tokens += 1120;
    }
    Json candidate = Json::object();
    candidate["content"] =
        parts.empty() ? Json::object() : Json{{"role", "model"}, {"parts", std::move(parts)}};
    candidate["finishReason"] = spec.finish_reason;
    if (!spec.finish_message.empty()) candidate["finishMessage"] = spec.finish_message;
    candidate["index"] = 0;
    doc["candidates"] = Json::array({std::move(candidate)});
  }
  Json usage = {{"promptTokenCount", spec.prompt_tokens}};
  if (candidate_tokens > 0) usage["candidatesTokenCount"] = candidate_tokens;
  usage["totalTokenCount"] = spec.prompt_tokens + candidate_tokens;
  doc["usageMetadata"] = std::move(usage);
  doc["modelVersion"] = spec.model;
  doc["responseId"] = RandomHex(12);
  doc["serviceTier"] = "standard";  // an unknown field real responses may carry; clients ignore it

  std::string text = doc.dump();
  if (spec.image != nullptr) {
    const size_t at = text.find(kImagePlaceholder);
    std::string out;
    out.reserve(text.size() + Base64EncodedSize(spec.image->size()));
    out.append(text, 0, at);
    Base64EncodeAppend(*spec.image, out);
    out.append(text, at + sizeof(kImagePlaceholder) - 1, std::string::npos);
    return out;
  }
  return text;
}

}  // namespace imgmcp::fake_gemini
