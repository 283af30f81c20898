#include "tests/fake_gemini/fake_wire.h"

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <algorithm>
#include <array>
#include <set>

#include "common/base64.h"
#include "common/random.h"
#include "common/sha256.h"
#include "imaging/codec.h"

namespace imgmcp::fake_gemini {
namespace {

// What the real API accepts per model (docs/generation.md), written here
// independently of imgmcp's own table (gemini_client/models.cpp) so that tests against this fake
// check imgmcp's rules against the API's, not against themselves.
struct ModelRules {
  std::string_view id;
  std::array<int, 4> image_tokens;   // output tokens of one image at 512, 1K, 2K, 4K; 0 = refused
  bool extreme_ratios;               // 1:4 4:1 1:8 8:1
  bool search;                       // tools [{google_search:{}}]
  std::string_view thinking_levels;  // thinkingConfig.thinkingLevel values, e.g. "MINIMAL HIGH"
  bool always_thinks;                // answers start with a thought part
  bool signatures;                   // thoughtSignatures on its parts, required on a replay
};
constexpr ModelRules kModels[] = {
    {"gemini-3.1-flash-lite-image", {0, 1120, 0, 0}, false, false, "MINIMAL HIGH", false, true},
    {"gemini-nano-banana-2.1",
     {0, 1120, 1680, 2520},
     true,
     true,
     "MINIMAL MEDIUM HIGH",
     false,
     true},
    {"gemini-3.1-flash-image", {747, 1120, 1680, 2520}, true, true, "MINIMAL HIGH", false, true},
    {"gemini-3.1-flash-image-preview",
     {747, 1120, 1680, 2520},
     true,
     true,
     "MINIMAL HIGH",
     false,
     true},
    {"gemini-3-pro-image", {0, 1120, 1120, 2000}, false, true, "", true, true},
    {"gemini-3-pro-image-preview", {0, 1120, 1120, 2000}, false, true, "", true, true},
    {"gemini-2.5-flash-image", {0, 1290, 0, 0}, false, false, "", false, false},
    {"gemini-2.5-flash-image-preview", {0, 1290, 0, 0}, false, false, "", false, false},
};
// Every thinkingLevel Gemini knows, and the thought tokens the fake reports for each.
constexpr std::pair<std::string_view, int> kThinkingLevels[] = {
    {"MINIMAL", 24}, {"LOW", 64}, {"MEDIUM", 120}, {"HIGH", 240}};
constexpr int kAlwaysThinksTokens = 180;  // 3 Pro's thoughts, no level asked for
constexpr int kInputImageTokens = 560;    // one input image (the reference's example)

// "MINIMAL HIGH" → {"MINIMAL", "HIGH"}.
std::vector<std::string_view> Words(std::string_view text) {
  std::vector<std::string_view> out;
  for (size_t start = 0; start < text.size();) {
    const size_t end = std::min(text.find(' ', start), text.size());
    if (end > start) out.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

// "MINIMAL, MEDIUM or HIGH".
std::string LevelsText(std::string_view levels) {
  const std::vector<std::string_view> words = Words(levels);
  std::string out;
  for (size_t i = 0; i < words.size(); ++i) {
    if (i > 0) out += i + 1 == words.size() ? " or " : ", ";
    out += words[i];
  }
  return out;
}

bool TakesLevel(std::string_view levels, std::string_view level) {
  const std::vector<std::string_view> words = Words(levels);
  return std::find(words.begin(), words.end(), level) != words.end();
}

constexpr std::array<std::string_view, 4> kSizes = {"512", "1K", "2K", "4K"};
constexpr std::array<std::string_view, 14> kRatios = {"1:1", "2:3", "3:2",  "3:4",  "4:3",
                                                      "4:5", "5:4", "9:16", "16:9", "21:9",
                                                      "1:4", "4:1", "1:8",  "8:1"};
constexpr size_t kStandardRatios = 10;

const ModelRules* FindRules(std::string_view model) {
  for (const ModelRules& m : kModels) {
    if (m.id == model) return &m;
  }
  return nullptr;
}

int SizeIndex(std::string_view size) {
  for (size_t i = 0; i < kSizes.size(); ++i) {
    if (kSizes[i] == size) return static_cast<int>(i);
  }
  return -1;
}

// The process's signing key: signatures verify only in the fake process that issued them, like
// Google's only verify for the model that produced them.
const std::string& SigningKey() {
  static const std::string key = RandomHex(32);
  return key;
}

std::string Mac(std::string_view model, std::string_view nonce, std::string_view kind,
                std::string_view content) {
  const std::string content_hash = Sha256Hex(content);
  std::string message;
  message.append(model).append("\n").append(nonce).append("\n").append(kind).append("\n");
  message += content_hash;
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int mac_len = 0;
  HMAC(EVP_sha256(), SigningKey().data(), static_cast<int>(SigningKey().size()),
       reinterpret_cast<const unsigned char*>(message.data()), message.size(), mac, &mac_len);
  return std::string(reinterpret_cast<const char*>(mac), mac_len);
}

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
const Keys kThinkingKeys = {"thinkingLevel",   "thinking_level",  "thinkingBudget",
                            "thinking_budget", "includeThoughts", "include_thoughts"};
const Keys kToolKeys = {
    "googleSearch",  "google_search",  "googleSearchRetrieval", "google_search_retrieval",
    "codeExecution", "code_execution", "functionDeclarations",  "function_declarations",
    "urlContext",    "url_context"};
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

bool IsKnownModel(std::string_view model) { return FindRules(model) != nullptr; }

std::string SignPart(std::string_view model, std::string_view kind, std::string_view content) {
  const std::string nonce = RandomHex(8);
  return Base64Encode(nonce + Mac(model, nonce, kind, content));
}

bool VerifySignature(std::string_view model, std::string_view kind, std::string_view content,
                     std::string_view signature) {
  auto raw = Base64Decode(signature);
  if (!raw.ok() || raw->size() != 16 + 32) return false;
  const std::string nonce = raw->substr(0, 16);
  return raw->substr(16) == Mac(model, nonce, kind, content);
}

int ImageTokens(std::string_view model, std::string_view image_size) {
  const ModelRules* rules = FindRules(model);
  const int i = SizeIndex(image_size.empty() ? "1K" : image_size);
  return rules == nullptr || i < 0 ? 1120 : rules->image_tokens[i];
}

bool AlwaysThinks(std::string_view model) {
  const ModelRules* rules = FindRules(model);
  return rules != nullptr && rules->always_thinks;
}

int ThoughtTokens(std::string_view model, std::string_view thinking_level) {
  for (const auto& [level, tokens] : kThinkingLevels) {
    if (level == thinking_level) return tokens;
  }
  return AlwaysThinks(model) ? kAlwaysThinksTokens : 0;
}

int InputImageTokens() { return kInputImageTokens; }

bool UsesThoughtSignatures(std::string_view model) {
  const ModelRules* rules = FindRules(model);
  return rules != nullptr && rules->signatures;
}

Result<ParsedRequest> ParseRequest(std::string_view body, std::string_view model,
                                   std::string* signature_problem) {
  std::string problem_storage;
  std::string& problem = signature_problem != nullptr ? *signature_problem : problem_storage;
  Json doc = Json::parse(body.begin(), body.end(), nullptr, false);
  if (doc.is_discarded()) {
    return Invalid("Invalid JSON payload received. Unexpected token.");
  }
  RETURN_IF_ERROR(CheckKeys(doc, kTopKeys, ""));
  const ModelRules* rules = FindRules(model);
  ParsedRequest out;

  const Json* contents = doc.contains("contents") ? &doc["contents"] : nullptr;
  if (contents == nullptr || !contents->is_array() || contents->empty()) {
    return Invalid("* GenerateContentRequest.contents: contents is not specified");
  }
  std::vector<imaging::EncodedImage> history_images;
  for (size_t c = 0; c < contents->size(); ++c) {
    const Json& content = (*contents)[c];
    const std::string where = "contents[" + std::to_string(c) + "]";
    RETURN_IF_ERROR(CheckKeys(content, kContentKeys, where));
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
    Json turn_log = {{"role", role}, {"texts", Json::array()}, {"images", 0}, {"signatures", 0}};
    for (size_t p = 0; p < parts.size(); ++p) {
      const Json& part = parts[p];
      const std::string pwhere = where + ".parts[" + std::to_string(p) + "]";
      RETURN_IF_ERROR(CheckKeys(part, kPartKeys, pwhere));
      const bool thought =
          part.contains("thought") && part["thought"].is_boolean() && part["thought"].get<bool>();
      const Json* signature = Get(part, "thoughtSignature", "thought_signature");
      if (signature != nullptr && !signature->is_string()) {
        return Invalid("Invalid value at '" + pwhere + ".thought_signature' (TYPE_BYTES)");
      }
      // Where Google reports a replayed part: 1-based content and part positions.
      const std::string position = "in content position " + std::to_string(c + 1) +
                                   ", part position " + std::to_string(p + 1) + ".";
      const bool check_signature = role == "model" && !thought && UsesThoughtSignatures(model);
      if (const Json* text = Get(part, "text", "text"); text != nullptr) {
        if (!text->is_string()) return Invalid("Invalid value at '" + pwhere + ".text'");
        if (!thought) {
          if (!turn_text.empty()) turn_text += ' ';
          turn_text += text->get<std::string>();
          turn_log["texts"].push_back(text->get<std::string>());
        }
        if (check_signature && signature != nullptr) {
          if (!VerifySignature(model, "text", text->get_ref<const std::string&>(),
                               signature->get_ref<const std::string&>())) {
            problem = "altered";
            return Invalid("Corrupted thought signature " + position);
          }
          turn_log["signatures"] = turn_log["signatures"].get<int>() + 1;
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
      if (check_signature) {
        // A replayed model image must carry the signature issued with it, over the same bytes.
        if (signature == nullptr)
          problem = "missing";
        else if (!VerifySignature(model, "image", *bytes, signature->get_ref<const std::string&>()))
          problem = "altered";
        if (!problem.empty()) {
          return Invalid("Image part is missing a thought_signature " + position);
        }
        turn_log["signatures"] = turn_log["signatures"].get<int>() + 1;
      }
      turn_log["images"] = turn_log["images"].get<int>() + 1;
      const imaging::ImageFormat format = imaging::SniffFormat(*bytes);
      out.image_log.push_back({{"declared_mime_type", declared},
                               {"sniffed_mime_type", imaging::MimeTypeOf(format)},
                               {"bytes", bytes->size()},
                               {"sha256", Sha256Hex(*bytes)},
                               {"role", role},
                               {"content", c}});
      if (!thought) {
        imaging::EncodedImage image;
        image.mime_type = imaging::MimeTypeOf(format);
        image.bytes = std::move(bytes).value();
        turn_images.push_back(std::move(image));
      }
    }
    out.turns.push_back(std::move(turn_log));
    if (last) {
      out.prompt = turn_text;
      out.images = std::move(turn_images);
    } else if (!turn_images.empty()) {
      history_images.clear();
      history_images.push_back(std::move(turn_images.back()));
    }
  }
  // A chat's later turn edits the previous answer; the images sent with it are references.
  if (!history_images.empty()) {
    out.images.insert(out.images.begin(), std::move(history_images.back()));
  }

  if (const Json* tools = Get(doc, "tools", "tools"); tools != nullptr) {
    if (!tools->is_array()) return Invalid("Invalid value at 'tools'");
    for (size_t t = 0; t < tools->size(); ++t) {
      const Json& tool = (*tools)[t];
      if (Status s = CheckKeys(tool, kToolKeys, "tools[" + std::to_string(t) + "]"); !s.ok()) {
        return s.error();
      }
      const Json* search = Get(tool, "googleSearch", "google_search");
      if (search == nullptr) {
        return Invalid("Tool use is not supported for models/" + std::string(model) +
                       "; only google_search is.");
      }
      if (!search->is_object())
        return Invalid("Invalid value at 'tools[" + std::to_string(t) + "].google_search'");
      if (rules == nullptr || !rules->search) {
        return Invalid("Search Grounding is not supported for models/" + std::string(model) + ".");
      }
      out.search = true;
    }
  }

  if (const Json* config = Get(doc, "generationConfig", "generation_config"); config != nullptr) {
    RETURN_IF_ERROR(CheckKeys(*config, kConfigKeys, "generation_config"));
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
    if (const Json* tc = Get(*config, "thinkingConfig", "thinking_config"); tc != nullptr) {
      if (Status s = CheckKeys(*tc, kThinkingKeys, "generation_config.thinking_config"); !s.ok()) {
        return s.error();
      }
      if (const Json* level = Get(*tc, "thinkingLevel", "thinking_level"); level != nullptr) {
        const bool known =
            level->is_string() &&
            std::any_of(std::begin(kThinkingLevels), std::end(kThinkingLevels), [&](const auto& l) {
              return l.first == level->get_ref<const std::string&>();
            });
        if (!known) {
          return Invalid("Invalid value at 'generation_config.thinking_config.thinking_level' (" +
                         level->dump() + ")");
        }
        if (rules == nullptr || rules->thinking_levels.empty()) {
          return Invalid("Thinking level is not supported for this model.");
        }
        if (!TakesLevel(rules->thinking_levels, level->get_ref<const std::string&>())) {
          return Invalid("Thinking level " + level->get<std::string>() +
                         " is not supported for models/" + std::string(model) +
                         "; this model takes " + LevelsText(rules->thinking_levels) + ".");
        }
        out.thinking_level = level->get<std::string>();
      }
    }
    if (const Json* ic = Get(*config, "imageConfig", "image_config"); ic != nullptr) {
      if (Status s = CheckKeys(*ic, kImageConfigKeys, "generation_config.image_config"); !s.ok()) {
        return s.error();
      }
      if (const Json* ar = Get(*ic, "aspectRatio", "aspect_ratio"); ar != nullptr) {
        size_t found = kRatios.size();
        if (ar->is_string()) {
          for (size_t i = 0; i < kRatios.size(); ++i) {
            if (kRatios[i] == ar->get_ref<const std::string&>()) found = i;
          }
        }
        const bool allowed = found < kStandardRatios ||
                             (found < kRatios.size() && rules != nullptr && rules->extreme_ratios);
        if (!allowed) {
          return Invalid("Unsupported aspect ratio " + ar->dump() + " for model " +
                         std::string(model) + ".");
        }
        out.aspect_ratio = ar->get<std::string>();
      }
      if (const Json* size = Get(*ic, "imageSize", "image_size"); size != nullptr) {
        const int i = size->is_string() ? SizeIndex(size->get_ref<const std::string&>()) : -1;
        if (i < 0 || rules == nullptr || rules->image_tokens[i] == 0) {
          return Invalid("Unsupported image size " + size->dump() + " for model " +
                         std::string(model) + ".");
        }
        out.image_size = size->get<std::string>();
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

namespace {

// What a search-grounded answer carries (candidates[0].groundingMetadata): the query, the search
// suggestion chip, two web sources and which text they support. Deterministic per query.
Json Grounding(const std::string& query) {
  const std::string slug = Sha256Hex(query).substr(0, 12);
  Json chunks = Json::array();
  chunks.push_back(
      {{"web",
        {{"uri", "https://vertexaisearch.cloud.google.com/grounding-api-redirect/" + slug + "-1"},
         {"title", "example.org"}}}});
  chunks.push_back(
      {{"web",
        {{"uri", "https://vertexaisearch.cloud.google.com/grounding-api-redirect/" + slug + "-2"},
         {"title", "weather.example"}}}});
  return {
      {"webSearchQueries", Json::array({query})},
      {"searchEntryPoint", {{"renderedContent", "<div class=\"container\">" + query + "</div>"}}},
      {"groundingChunks", std::move(chunks)},
      {"groundingSupports",
       Json::array({{{"segment", {{"startIndex", 0}, {"endIndex", 10}, {"text", "Here is th"}}},
                     {"groundingChunkIndices", Json::array({0, 1})}}})}};
}

// usageMetadata as Google sends it: the counts, and the prompt's and the answer's tokens by
// modality. `candidate_tokens` counts the answer's parts (its image and text).
Json Usage(const ResponseSpec& spec, int candidate_tokens) {
  const int prompt = spec.prompt_text_tokens + spec.prompt_image_tokens;
  Json usage = {{"promptTokenCount", prompt}};
  if (candidate_tokens > 0) usage["candidatesTokenCount"] = candidate_tokens;
  const int thoughts =
      spec.block_reason.empty() ? spec.thoughts_tokens + 40 * spec.thought_parts : 0;
  if (thoughts > 0) usage["thoughtsTokenCount"] = thoughts;
  usage["totalTokenCount"] = prompt + candidate_tokens + thoughts;
  Json prompt_details =
      Json::array({{{"modality", "TEXT"}, {"tokenCount", spec.prompt_text_tokens}}});
  if (spec.prompt_image_tokens > 0) {
    prompt_details.push_back({{"modality", "IMAGE"}, {"tokenCount", spec.prompt_image_tokens}});
  }
  usage["promptTokensDetails"] = std::move(prompt_details);
  if (candidate_tokens > 0) {
    Json details = Json::array();
    if (spec.image != nullptr) {
      details.push_back({{"modality", "IMAGE"}, {"tokenCount", spec.image_tokens}});
    }
    if (candidate_tokens > (spec.image != nullptr ? spec.image_tokens : 0)) {
      details.push_back(
          {{"modality", "TEXT"},
           {"tokenCount", candidate_tokens - (spec.image != nullptr ? spec.image_tokens : 0)}});
    }
    usage["candidatesTokensDetails"] = std::move(details);
  }
  return usage;
}

}  // namespace

std::string BuildResponse(const ResponseSpec& spec) {
  const bool signatures = UsesThoughtSignatures(spec.model);
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
      if (signatures) part["thoughtSignature"] = SignPart(spec.model, "text", spec.text);
      parts.push_back(std::move(part));
      candidate_tokens += 12;
    }
    if (spec.image != nullptr) {
      Json part = {{"inlineData", {{"mimeType", spec.image_label}, {"data", kImagePlaceholder}}}};
      if (signatures) part["thoughtSignature"] = SignPart(spec.model, "image", *spec.image);
      parts.push_back(std::move(part));
      candidate_tokens += spec.image_tokens;
    }
    Json candidate = Json::object();
    candidate["content"] =
        parts.empty() ? Json::object() : Json{{"role", "model"}, {"parts", std::move(parts)}};
    candidate["finishReason"] = spec.finish_reason;
    if (!spec.finish_message.empty()) candidate["finishMessage"] = spec.finish_message;
    if (!spec.grounding_query.empty())
      candidate["groundingMetadata"] = Grounding(spec.grounding_query);
    candidate["index"] = 0;
    doc["candidates"] = Json::array({std::move(candidate)});
  }
  doc["usageMetadata"] = Usage(spec, candidate_tokens);
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
