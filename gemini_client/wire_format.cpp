#include "gemini_client/wire_format.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#if defined(__linux__)
#include <sys/mman.h>
#endif

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdint>
#include <cstring>
#include <optional>
#include <utility>
#include <vector>

#include "common/base64.h"
#include "common/decimal.h"
#include "common/json.h"
#include "imaging/codec.h"

namespace imgmcp::gemini {
namespace {

using imaging::BackendImage;
using imaging::EncodedImage;

constexpr size_t kMaxQuotedChars = 400;

// ---- JSON helpers (never throw) -------------------------------------------------------------

// The one place a response body is turned into a DOM; swap for a streaming parser if profiles
// show the multi-megabyte base64 string matters.
Json ParseJsonBody(std::string_view body) {
  return Json::parse(body.begin(), body.end(), /*cb=*/nullptr, /*allow_exceptions=*/false);
}

// Looks up `camel` (or its snake_case spelling) in an object; nullptr when absent or not an object.
const Json* Field(const Json& obj, const char* camel, const char* snake = nullptr) {
  if (!obj.is_object()) return nullptr;
  auto it = obj.find(camel);
  if (it != obj.end()) return &*it;
  if (snake != nullptr) {
    it = obj.find(snake);
    if (it != obj.end()) return &*it;
  }
  return nullptr;
}

std::string StringField(const Json& obj, const char* camel, const char* snake = nullptr) {
  const Json* v = Field(obj, camel, snake);
  return v != nullptr && v->is_string() ? v->get<std::string>() : std::string();
}

// A response body parsed with its big base64 strings lifted out. A Gemini answer is one
// multi-megabyte base64 image plus a few hundred bytes of structure; nlohmann's lexer runs at
// ~100 MB/s and would spend tens of milliseconds copying the image into the DOM. A plain scan
// (~GB/s) moves every long string made only of base64 characters out of the text first, so
// nlohmann parses just the skeleton and the image is decoded straight from the body. Such a
// string needs no unescaping, so its value is exactly the span; the token structure is
// unchanged, so a body is valid JSON exactly when its skeleton is.
class LiftedJson {
 public:
  explicit LiftedJson(std::string_view body) {
    // The placeholder starts with U+0000; a body that spells \u0000 anywhere keeps every string
    // in the DOM, so a placeholder can never be mistaken for text the server sent.
    const bool may_lift =
        body.size() >= kMinLifted && body.find("\\u0000") == std::string_view::npos;
    std::string skeleton;
    size_t copied = 0;  // body[copied, ...) is not yet in the skeleton
    size_t i = 0;
    while (may_lift) {
      const void* q = std::memchr(body.data() + i, '"', body.size() - i);
      if (q == nullptr) break;
      const size_t open = static_cast<const char*>(q) - body.data();
      size_t j = StringEnd(body, open + 1);
      if (j >= body.size()) break;  // unterminated: the parser reports it
      const bool plain = AllBase64(body.substr(open + 1, j - open - 1));
      if (plain && j - open - 1 >= kMinLifted) {
        if (skeleton.empty()) skeleton.reserve(std::min<size_t>(body.size(), 64 * 1024));
        skeleton.append(body.substr(copied, open - copied));
        skeleton += "\"\\u0000";
        skeleton += kPlaceholderTag;
        skeleton += std::to_string(lifted_.size());
        skeleton += '"';
        lifted_.push_back(body.substr(open + 1, j - open - 1));
        copied = j + 1;
      }
      i = j + 1;
    }
    if (lifted_.empty()) {
      doc_ = ParseJsonBody(body);
    } else {
      skeleton.append(body.substr(copied));
      doc_ = ParseJsonBody(skeleton);
    }
  }

  const Json& doc() const { return doc_; }

  // The value of a string node (a lifted one restored); nullopt when `v` is not a string.
  std::optional<std::string_view> String(const Json* v) const {
    if (v == nullptr || !v->is_string()) return std::nullopt;
    const std::string& s = v->get_ref<const std::string&>();
    const std::string_view tag(kPlaceholderTag);
    if (!lifted_.empty() && s.size() > tag.size() + 1 && s[0] == '\0' &&
        std::string_view(s).substr(1, tag.size()) == tag) {
      const std::optional<size_t> index =
          ParseDecimal<size_t>(std::string_view(s).substr(1 + tag.size()));
      if (index && *index < lifted_.size()) return lifted_[*index];
    }
    return std::string_view(s);
  }

  std::string StringField(const Json& obj, const char* camel, const char* snake = nullptr) const {
    auto v = String(Field(obj, camel, snake));
    return v ? std::string(*v) : std::string();
  }

  // A copy of `v` with every lifted string restored: the value exactly as the server sent it.
  Json Restore(const Json& v) const {
    if (v.is_string()) return Json(std::string(*String(&v)));
    if (v.is_object()) {
      Json out = Json::object();
      for (const auto& [key, value] : v.items()) out[key] = Restore(value);
      return out;
    }
    if (v.is_array()) {
      Json out = Json::array();
      for (const Json& item : v) out.push_back(Restore(item));
      return out;
    }
    return v;
  }

 private:
  static constexpr size_t kMinLifted = 4096;
  static constexpr char kPlaceholderTag[] = "imgmcp-lifted:";

  // The index of the '"' closing the string whose first content byte is at `from` (body.size()
  // when unterminated). memchr finds the candidate quote; only a string holding a backslash
  // needs the byte-wise walk that skips escaped characters.
  static size_t StringEnd(std::string_view body, size_t from) {
    const void* q = std::memchr(body.data() + from, '"', body.size() - from);
    if (q == nullptr) return body.size();
    const size_t quote = static_cast<const char*>(q) - body.data();
    if (std::memchr(body.data() + from, '\\', quote - from) == nullptr) return quote;
    size_t j = from;
    while (j < body.size() && body[j] != '"') j += body[j] == '\\' ? 2 : 1;
    return std::min(j, body.size());
  }

  // Whether every byte is a base64 character (standard or URL-safe alphabet, or '='). The image
  // string is megabytes long, so 16 bytes are checked per step where SSE2 is available.
  static bool AllBase64(std::string_view s) {
    const char* p = s.data();
    size_t n = s.size();
#if defined(__SSE2__)
    auto in = [](__m128i v, char lo, char hi) {  // lo <= v <= hi, for ASCII bounds
      return _mm_and_si128(_mm_cmpgt_epi8(v, _mm_set1_epi8(static_cast<char>(lo - 1))),
                           _mm_cmplt_epi8(v, _mm_set1_epi8(static_cast<char>(hi + 1))));
    };
    auto eq = [](__m128i v, char c) { return _mm_cmpeq_epi8(v, _mm_set1_epi8(c)); };
    for (; n >= 16; n -= 16, p += 16) {
      const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
      __m128i ok = in(_mm_or_si128(v, _mm_set1_epi8(0x20)), 'a', 'z');  // either case
      ok = _mm_or_si128(ok, in(v, '0', '9'));
      ok = _mm_or_si128(ok, _mm_or_si128(eq(v, '+'), eq(v, '/')));
      ok = _mm_or_si128(ok, _mm_or_si128(eq(v, '-'), eq(v, '_')));
      ok = _mm_or_si128(ok, eq(v, '='));
      if (_mm_movemask_epi8(ok) != 0xFFFF) return false;
    }
#endif
    for (; n > 0; --n, ++p) {
      if (!kBase64Chars[static_cast<unsigned char>(*p)]) return false;
    }
    return true;
  }

  static constexpr std::array<bool, 256> kBase64Chars = [] {
    std::array<bool, 256> t{};
    for (int c = 'A'; c <= 'Z'; ++c) t[c] = true;
    for (int c = 'a'; c <= 'z'; ++c) t[c] = true;
    for (int c = '0'; c <= '9'; ++c) t[c] = true;
    for (char c : {'+', '/', '-', '_', '='}) t[static_cast<unsigned char>(c)] = true;
    return t;
  }();

  Json doc_;
  std::vector<std::string_view> lifted_;  // spans of the caller's body
};

std::string JsonQuote(std::string_view text) {
  return Json(std::string(text)).dump(-1, ' ', false, Json::error_handler_t::replace);
}

// One line, printable, at most kMaxQuotedChars (cut on a UTF-8 boundary): safe to quote from a
// server into an error message.
std::string Tidy(std::string_view text) {
  std::string out;
  out.reserve(std::min(text.size(), kMaxQuotedChars + 4));
  bool space = false;
  for (char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) {
      space = !out.empty();
      continue;
    }
    if (c == ' ') {
      space = !out.empty();
      continue;
    }
    if (space) out.push_back(' ');
    space = false;
    if (out.size() >= kMaxQuotedChars) {
      while (!out.empty() && (static_cast<unsigned char>(out.back()) & 0xC0) == 0x80)
        out.pop_back();
      if (!out.empty() && static_cast<unsigned char>(out.back()) >= 0xC0) out.pop_back();
      out += "…";
      return out;
    }
    out.push_back(c);
  }
  return out;
}

// ---- request ------------------------------------------------------------------------------

Result<const char*> DeclaredMimeType(const EncodedImage& image, std::string_view what) {
  if (image.bytes.empty()) {
    return MakeError(ErrorCode::kInvalidArgument, std::string(what) + " is empty");
  }
  const imaging::ImageFormat format = imaging::SniffFormat(image.bytes);
  switch (format) {
    case imaging::ImageFormat::kPng:
    case imaging::ImageFormat::kJpeg:
    case imaging::ImageFormat::kWebp:
      return imaging::MimeTypeOf(format);
    case imaging::ImageFormat::kGif:
      return MakeError(
          ErrorCode::kUnsupported,
          std::string(what) + " is a GIF, which Gemini does not accept; convert it to PNG or JPEG");
    case imaging::ImageFormat::kUnknown:
      break;
  }
  return MakeError(ErrorCode::kInvalidArgument,
                   std::string(what) +
                       " is not a PNG, JPEG or WebP image (its first bytes match no known format)");
}

struct Part {
  const EncodedImage* image;
  std::string what;
};

std::string Dump(const Json& j) { return j.dump(-1, ' ', false, Json::error_handler_t::replace); }

// Asks Linux to back the whole 2 MiB blocks of [data, data + size) with transparent huge pages.
// A chain edit's body is tens of megabytes of fresh memory each time (from 32 MiB, glibc's
// largest mmap threshold, always a new mapping), and with 4 KiB pages writing it costs a page
// fault per page (a trap, a zeroed page, a memory-cgroup charge): about 10,000 for four replayed
// 2K turns, most of the time the request took to build. Only blocks inside the buffer are
// advised; it is a hint, and where huge pages are off nothing changes.
void AdviseHugePages(const char* data, size_t size) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  constexpr uintptr_t kHugePage = uintptr_t{2} << 20;
  if (size < 2 * kHugePage) return;
  const uintptr_t begin = (reinterpret_cast<uintptr_t>(data) + kHugePage - 1) & ~(kHugePage - 1);
  const uintptr_t end = (reinterpret_cast<uintptr_t>(data) + size) & ~(kHugePage - 1);
  // NOLINTNEXTLINE(performance-no-int-to-ptr): a page boundary is found by integer arithmetic
  if (end > begin) madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
#endif
}

// A request body written in two passes, so that its tens of megabytes are allocated once, at
// their exact size (no estimate to keep in step with what is written, no reallocation when one
// falls short), and each image's base64 is written straight into place: the JSON around the
// images (a few kilobytes) is collected with a mark where each image goes, then Finish() writes
// text and base64 in order.
class BodyWriter {
 public:
  BodyWriter& operator+=(std::string_view text) {
    text_ += text;
    return *this;
  }
  BodyWriter& operator+=(char c) {
    text_ += c;
    return *this;
  }
  // The base64 of `bytes` goes here; `bytes` must outlive Finish().
  void AppendBase64(std::string_view bytes) { images_.push_back({text_.size(), bytes}); }

  std::string Finish() const {
    size_t size = text_.size();
    for (const Image& image : images_) size += Base64EncodedSize(image.bytes.size());
    std::string body;
    body.reserve(size);
    AdviseHugePages(body.data(), size);
    size_t from = 0;
    for (const Image& image : images_) {
      body.append(text_, from, image.at - from);
      Base64EncodeAppend(image.bytes, body);
      from = image.at;
    }
    body.append(text_, from);
    return body;
  }

 private:
  struct Image {
    size_t at;  // where in text_ its base64 goes
    std::string_view bytes;
  };
  std::string text_;
  std::vector<Image> images_;
};

// Appends `,{"inlineData":{"mimeType":…,"data":…}}` with the type sniffed from the bytes.
Status AppendUserImage(const Part& p, BodyWriter& body) {
  ASSIGN_OR_RETURN(const char* mime, DeclaredMimeType(*p.image, p.what));
  body += R"(,{"inlineData":{"mimeType":")";
  body += mime;
  body += R"(","data":")";
  body.AppendBase64(p.image->bytes);
  body += R"("}})";
  return Status::Ok();
}

// What ReplayData stored for one answer: its parts, and which of them is the final image.
struct Replay {
  Json parts;
  size_t image = 0;
};

Result<Replay> ReadReplay(const imaging::ChainTurn& turn, const std::string& what) {
  Json replay = ParseJsonBody(turn.replay);
  Json* parts = replay.is_object() && replay.contains("parts") ? &replay["parts"] : nullptr;
  const Json* image_index = Field(replay, "image");
  if (parts == nullptr || !parts->is_array() || parts->empty() || image_index == nullptr ||
      !image_index->is_number_unsigned() || image_index->get<size_t>() >= parts->size() ||
      !(*parts)[image_index->get<size_t>()].contains("inlineData")) {
    return MakeError(ErrorCode::kDataLoss, what +
                                               " is damaged (not the replay data imgmcp "
                                               "stores); edit with context \"image\" instead");
  }
  if (turn.image.bytes.empty()) return MakeError(ErrorCode::kDataLoss, what + " has no image");
  return Replay{std::move(*parts), image_index->get<size_t>()};
}

// The final image's part of a replayed answer, its data being `bytes`: inlineData first (its
// other keys as Gemini sent them, then data), then the part's other keys (thoughtSignature, …).
Status AppendReplayedImage(Json part, std::string_view bytes, const std::string& what,
                           BodyWriter& body) {
  Json inline_data = part["inlineData"];
  part.erase("inlineData");
  if (!inline_data.is_object()) return MakeError(ErrorCode::kDataLoss, what + " is damaged");
  inline_data.erase("data");
  std::string head = Dump(inline_data);  // {"mimeType":"image/png"} as Gemini labelled it
  head.pop_back();
  body += R"({"inlineData":)";
  body += head;
  body += head.size() > 1 ? R"(,"data":")" : R"("data":")";
  body.AppendBase64(bytes);
  body += "\"}";
  const std::string rest = Dump(part);  // thoughtSignature and anything else, as sent
  if (rest.size() > 2) {
    body += ',';
    body += std::string_view(rest).substr(1);
  } else {
    body += '}';
  }
  return Status::Ok();
}

// The model content of one replayed turn: the parts exactly as Gemini sent them (kept in
// ChainTurn::replay), the image part's data being the turn's stored bytes.
Status AppendModelTurn(const imaging::ChainTurn& turn, size_t index, BodyWriter& body) {
  const std::string what = "the stored answer of chain turn " + std::to_string(index + 1);
  ASSIGN_OR_RETURN(Replay replay, ReadReplay(turn, what));
  body += R"({"role":"model","parts":[)";
  for (size_t i = 0; i < replay.parts.size(); ++i) {
    if (i > 0) body += ',';
    if (i == replay.image) {
      RETURN_IF_ERROR(AppendReplayedImage(replay.parts[i], turn.image.bytes, what, body));
    } else {
      body += Dump(replay.parts[i]);
    }
  }
  body += "]}";
  return Status::Ok();
}

// One earlier turn of a chain, followed by a comma: the user content [its text, its image if it
// sent one], then the model content as Gemini sent it.
Status AppendChainTurn(const imaging::ChainTurn& turn, size_t index, BodyWriter& body) {
  const std::string number = std::to_string(index + 1);
  if (turn.user_text.empty()) {
    return MakeError(ErrorCode::kDataLoss, "chain turn " + number + " has no instruction text");
  }
  body += R"({"role":"user","parts":[{"text":)";
  body += JsonQuote(turn.user_text);
  body += '}';
  if (turn.user_image) {
    RETURN_IF_ERROR(
        AppendUserImage({&*turn.user_image, "the image sent in chain turn " + number}, body));
  }
  body += "]},";
  RETURN_IF_ERROR(AppendModelTurn(turn, index, body));
  body += ',';
  return Status::Ok();
}

// What every request is checked for before a byte is written: a prompt, no aspect ratio on an
// edit, and the options and the number of input images against the model's row.
Status CheckRequest(const imaging::ModelCapabilities& model,
                    const imaging::GenerationOptions& options, bool generation,
                    std::string_view prompt, size_t images,
                    const std::vector<imaging::ChainTurn>& chain) {
  if (prompt.empty()) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "the prompt is empty; say what to draw or change");
  }
  if (!generation && !options.aspect_ratio.empty()) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "aspect_ratio applies to generations; an edit keeps the image's ratio");
  }
  imaging::GenerationOptions checked = options;
  checked.model = model.id;
  checked.chain = !chain.empty();
  checked.input_images = static_cast<int>(images);
  for (const imaging::ChainTurn& turn : chain) {
    checked.input_images += 1 + (turn.user_image ? 1 : 0);
  }
  return imaging::CheckGenerationOptions({model}, checked);
}

// `"generationConfig":{…}`, and `,"tools":[…]` when search is on. Every value was checked against
// the model's vocabulary (CheckRequest): no escaping needed.
void AppendConfig(const imaging::ModelCapabilities& model,
                  const imaging::GenerationOptions& options, bool generation, BodyWriter& body) {
  body += R"("generationConfig":{"responseModalities":["TEXT","IMAGE"])";
  if (generation || !options.image_size.empty()) {
    body += R"(,"imageConfig":{)";
    if (generation) {
      body += R"("aspectRatio":")";
      body += options.aspect_ratio.empty() ? "1:1" : options.aspect_ratio;
      body += '"';
    }
    if (!options.image_size.empty()) {
      body += generation ? R"(,"imageSize":")" : R"("imageSize":")";
      body += options.image_size;
      body += '"';
    }
    body += '}';
  }
  if (!options.thinking.empty() && model.thinking == imaging::Support::kYes) {
    body += R"(,"thinkingConfig":{"thinkingLevel":")";
    for (char c : options.thinking) body += static_cast<char>(c - 'a' + 'A');  // "medium" → MEDIUM
    body += R"("})";
  }
  body += '}';
  if (options.search && model.search == imaging::Support::kYes) {
    body += R"(,"tools":[{"google_search":{}}])";
  }
}

// Builds a generateContent body: the chain's turns, then the user turn [prompt, images…], then
// the configuration. `aspect_ratio` is sent for generations only (1:1 by default).
Result<std::string> BuildBody(const imaging::ModelCapabilities& model,
                              const imaging::GenerationOptions& options, bool generation,
                              std::string_view prompt, const std::vector<Part>& images,
                              const std::vector<imaging::ChainTurn>& chain) {
  RETURN_IF_ERROR(CheckRequest(model, options, generation, prompt, images.size(), chain));
  BodyWriter body;
  body += R"({"contents":[)";
  for (size_t t = 0; t < chain.size(); ++t) {
    RETURN_IF_ERROR(AppendChainTurn(chain[t], t, body));
  }
  body += R"({"role":"user","parts":[{"text":)";
  body += JsonQuote(prompt);
  body += '}';
  for (const Part& p : images) {
    RETURN_IF_ERROR(AppendUserImage(p, body));
  }
  body += "]}],";
  AppendConfig(model, options, generation, body);
  body += '}';
  return body.Finish();
}

std::vector<Part> ReferenceParts(const std::vector<EncodedImage>& references) {
  std::vector<Part> parts;
  for (size_t i = 0; i < references.size(); ++i) {
    parts.push_back({&references[i], "reference image " + std::to_string(i + 1)});
  }
  return parts;
}

// ---- response -----------------------------------------------------------------------------

bool Contains(std::string_view hay, std::string_view needle) {
  return hay.find(needle) != std::string_view::npos;
}

void SetFailure(ResponseInfo* info, FailureKind kind) {
  if (info != nullptr) info->failure.kind = kind;
}

// What a non-200 body said: google.rpc.Status {code, message, status, details} when it is JSON.
struct ApiError {
  std::string status;   // error.status, e.g. "RESOURCE_EXHAUSTED"; "" if none
  std::string message;  // one tidy line, never empty
  std::string reason;   // ErrorInfo.reason
  std::optional<std::chrono::milliseconds> retry_delay;  // RetryInfo.retryDelay
  bool daily = false;  // a QuotaFailure violation of a per-day quota
};

// Reads RetryInfo, ErrorInfo and QuotaFailure from error.details; other details are ignored.
void ReadErrorDetails(const Json& details, ApiError& out) {
  if (!details.is_array()) return;
  for (const Json& d : details) {
    const std::string type = StringField(d, "@type");
    if (Contains(type, "google.rpc.RetryInfo")) {
      out.retry_delay = ParseProtoDuration(StringField(d, "retryDelay", "retry_delay"));
    } else if (Contains(type, "google.rpc.ErrorInfo")) {
      out.reason = StringField(d, "reason");
    } else if (Contains(type, "google.rpc.QuotaFailure")) {
      const Json* violations = Field(d, "violations");
      if (violations == nullptr || !violations->is_array()) continue;
      for (const Json& v : *violations) {
        if (Contains(StringField(v, "quotaId", "quota_id"), "PerDay")) out.daily = true;
      }
    }
  }
}

// The error object of a body, or the head of a body that is not one.
ApiError ReadErrorBody(std::string_view body) {
  ApiError out;
  const Json doc = ParseJsonBody(body);
  const Json* error = Field(doc, "error");
  if (error != nullptr && error->is_object()) {
    out.status = StringField(*error, "status");
    out.message = StringField(*error, "message");
    if (const Json* details = Field(*error, "details")) ReadErrorDetails(*details, out);
  } else {
    std::string_view head = body.substr(0, 200);
    out.message = head.empty() ? "(empty body)" : "non-JSON body: " + std::string(head);
  }
  out.message = Tidy(out.message);
  while (!out.message.empty() && (out.message.back() == '.' || out.message.back() == ' ')) {
    out.message.pop_back();
  }
  if (out.message.empty()) out.message = "(no message)";
  return out;
}

// A 400: a rejected key, a refused precondition (billing, region) or an invalid request.
Error BadRequestError(const ApiError& e, const std::string& tag) {
  if (e.reason == "API_KEY_INVALID" || Contains(e.message, "API key not valid")) {
    return Error(ErrorCode::kPermissionDenied,
                 "the Gemini API key was rejected (API_KEY_INVALID); check GEMINI_API_KEY. "
                 "Retrying will not help.");
  }
  if (e.status == "FAILED_PRECONDITION") {
    return Error(ErrorCode::kFailedPrecondition,
                 "Gemini refused the request (" + tag + "): " + e.message +
                     ". This usually means billing must be enabled for the project or the "
                     "model is not available in your region; retrying will not help.");
  }
  return Error(ErrorCode::kInvalidArgument,
               "Gemini rejected the request as invalid (" + tag + "): " + e.message +
                   ". Change the request (prompt, images, aspect ratio or model); retrying "
                   "the same request will not help.");
}

// The error for an HTTP status other than 200, saying whether retrying can help.
Error HttpStatusError(int http_status, const ApiError& e) {
  const std::string tag = std::to_string(http_status) + (e.status.empty() ? "" : " " + e.status);
  const std::string& message = e.message;
  switch (http_status) {
    case 400:
      return BadRequestError(e, tag);
    case 401:
    case 403:
      return Error(ErrorCode::kPermissionDenied,
                   "Gemini denied access (" + tag + "): " + message +
                       ". The API key is missing, blocked or not allowed to use this model; "
                       "check GEMINI_API_KEY. Retrying will not help.");
    case 402:
      return Error(ErrorCode::kResourceExhausted,
                   "Gemini refused the request for lack of credit (" + tag + "): " + message +
                       ". Add credit or enable billing; retrying will not help.");
    case 404:
      return Error(ErrorCode::kNotFound,
                   "Gemini does not know the requested model or endpoint (" + tag +
                       "): " + message +
                       ". Check the configured model id and base URL; retrying will not help.");
    case 408:
      return Error(ErrorCode::kUnavailable, "Gemini timed out the request (" + tag +
                                                "): " + message + ". Retrying may help.");
    case 429: {
      std::string text = "Gemini quota or rate limit exhausted (" + tag + "): " + message + ".";
      if (e.retry_delay) text += " Gemini asked to retry in " + FormatDelay(*e.retry_delay) + ".";
      if (e.daily) text += " The daily quota is used up; retrying today will not help.";
      return Error(ErrorCode::kResourceExhausted, text);
    }
    default:
      break;
  }
  if (http_status >= 500) {
    return Error(ErrorCode::kUnavailable, "Gemini is temporarily unavailable (" + tag +
                                              "): " + message + ". Retrying later may help.");
  }
  return Error(ErrorCode::kInternal,
               "Gemini answered with unexpected HTTP status " + tag + ": " + message + ".");
}

Error HttpError(int http_status, std::string_view body, ResponseInfo* info) {
  const ApiError e = ReadErrorBody(body);
  if (info != nullptr) {
    info->api_status = e.status;
    info->failure.http_status = http_status;
    info->failure.retry_delay = e.retry_delay;
    info->failure.daily_quota = e.daily;
    info->failure.kind =
        IsRetryableHttpStatus(http_status) ? FailureKind::kTransient : FailureKind::kTerminal;
  }
  return HttpStatusError(http_status, e);
}

constexpr std::array<std::string_view, 8> kRefusalReasons = {
    "SAFETY",    "IMAGE_SAFETY", "PROHIBITED_CONTENT", "IMAGE_PROHIBITED_CONTENT",
    "BLOCKLIST", "SPII",         "RECITATION",         "IMAGE_RECITATION"};
constexpr std::array<std::string_view, 4> kRetryOnceReasons = {"NO_IMAGE", "IMAGE_OTHER", "OTHER",
                                                               "MALFORMED_RESPONSE"};

template <size_t N>
bool OneOf(std::string_view value, const std::array<std::string_view, N>& set) {
  for (std::string_view s : set) {
    if (s == value) return true;
  }
  return false;
}

// groundingMetadata.groundingChunks[].web {uri, title}, each uri once, in order.
std::vector<imaging::Source> GroundingSources(const LiftedJson& parsed, const Json& candidate) {
  std::vector<imaging::Source> out;
  const Json* grounding = Field(candidate, "groundingMetadata", "grounding_metadata");
  const Json* chunks =
      grounding ? Field(*grounding, "groundingChunks", "grounding_chunks") : nullptr;
  if (chunks == nullptr || !chunks->is_array()) return out;
  for (const Json& chunk : *chunks) {
    const Json* web = Field(chunk, "web");
    if (web == nullptr || !web->is_object()) continue;
    imaging::Source source{parsed.StringField(*web, "title"), parsed.StringField(*web, "uri")};
    if (source.uri.empty()) continue;
    bool seen = false;
    for (const imaging::Source& s : out) seen = seen || s.uri == source.uri;
    if (!seen) out.push_back(std::move(source));
  }
  return out;
}

// How many Google Search queries the answer ran (groundingMetadata.webSearchQueries): what
// grounding is billed by.
int64_t GroundingQueries(const Json& candidate) {
  const Json* grounding = Field(candidate, "groundingMetadata", "grounding_metadata");
  const Json* queries =
      grounding ? Field(*grounding, "webSearchQueries", "web_search_queries") : nullptr;
  return queries != nullptr && queries->is_array() ? static_cast<int64_t>(queries->size()) : 0;
}

// What AppendModelTurn needs to replay this answer: {"parts":[every part as sent, the final
// image's data left out], "image": its index}.
std::string ReplayData(const LiftedJson& parsed, const Json& parts, size_t image_index) {
  Json replay = {{"parts", Json::array()}, {"image", image_index}};
  for (size_t i = 0; i < parts.size(); ++i) {
    Json part = parsed.Restore(parts[i]);
    if (i == image_index && part.is_object()) {
      // The snake_case spelling is accepted on input; replays use the camelCase one.
      if (part.contains("inline_data")) {
        part["inlineData"] = std::move(part["inline_data"]);
        part.erase("inline_data");
      }
      part["inlineData"].erase("data");
    }
    replay["parts"].push_back(std::move(part));
  }
  return Dump(replay);
}

// A 200 answer without candidates: a blocked prompt (promptFeedback.blockReason) or nothing.
Error NoCandidatesError(const LiftedJson& parsed, ResponseInfo* info) {
  const Json* feedback = Field(parsed.doc(), "promptFeedback", "prompt_feedback");
  const std::string block =
      feedback ? parsed.StringField(*feedback, "blockReason", "block_reason") : "";
  if (!block.empty()) {
    SetFailure(info, FailureKind::kTerminal);
    std::string detail =
        Tidy(parsed.StringField(*feedback, "blockReasonMessage", "block_reason_message"));
    return MakeError(ErrorCode::kFailedPrecondition,
                     "prompt blocked by Gemini (" + Tidy(block) + ")" +
                         (detail.empty() ? "" : ": " + detail) +
                         ". Rephrase the prompt or use different input images; retrying the "
                         "same request will not help.");
  }
  SetFailure(info, FailureKind::kRetryOnce);
  return MakeError(ErrorCode::kUnavailable,
                   "Gemini returned no candidates and no block reason. Retrying may help.");
}

// What a candidate's parts hold once thought parts (interim reasoning: text or draft images,
// never the answer) are skipped.
struct AnswerParts {
  const Json* parts = nullptr;  // content.parts, when it is an array
  std::string text;             // the text parts, one per line
  const Json* image = nullptr;  // the last inlineData
  size_t image_index = 0;       // of its part in parts
};

AnswerParts ReadAnswerParts(const LiftedJson& parsed, const Json& candidate) {
  AnswerParts out;
  const Json* content = Field(candidate, "content");
  const Json* parts = content ? Field(*content, "parts") : nullptr;
  if (parts == nullptr || !parts->is_array()) return out;
  out.parts = parts;
  for (size_t i = 0; i < parts->size(); ++i) {
    const Json& part = (*parts)[i];
    const Json* thought = Field(part, "thought");
    if (thought != nullptr && thought->is_boolean() && thought->get<bool>()) continue;
    if (auto t = parsed.String(Field(part, "text"))) {
      if (!out.text.empty()) out.text += '\n';
      out.text += *t;
    }
    const Json* inline_data = Field(part, "inlineData", "inline_data");
    if (inline_data != nullptr && inline_data->is_object()) {
      out.image = inline_data;
      out.image_index = i;
    }
  }
  return out;
}

// The error when the candidate has no image to return, from its finishReason first (a refusal,
// the token limit, a reason worth one retry), else from what it has instead (text, or nothing);
// nullopt when there is an image to read.
std::optional<Error> NoImageError(const LiftedJson& parsed, const Json& candidate,
                                  const std::string& finish, const AnswerParts& answer,
                                  ResponseInfo* info) {
  const std::string finish_message =
      Tidy(parsed.StringField(candidate, "finishMessage", "finish_message"));
  const std::string said =
      answer.text.empty() ? "" : " The model said: \"" + Tidy(answer.text) + "\".";
  if (OneOf(finish, kRefusalReasons)) {
    SetFailure(info, FailureKind::kTerminal);
    return MakeError(ErrorCode::kFailedPrecondition,
                     "Gemini refused to produce the image (" + finish + ")" +
                         (finish_message.empty() ? "" : ": " + finish_message) +
                         ". Rephrase the prompt or use different input images; retrying the "
                         "same request will not help.");
  }
  if (finish == "MAX_TOKENS") {
    SetFailure(info, FailureKind::kTerminal);
    return MakeError(ErrorCode::kFailedPrecondition,
                     "Gemini stopped at its output token limit (MAX_TOKENS) before finishing the "
                     "image. Ask for something simpler or shorten the prompt; retrying the same "
                     "request is unlikely to help.");
  }
  if (answer.image != nullptr) return std::nullopt;
  if (OneOf(finish, kRetryOnceReasons)) {
    SetFailure(info, FailureKind::kRetryOnce);
    return MakeError(ErrorCode::kUnavailable,
                     "Gemini finished without an image (" + finish + ")" +
                         (finish_message.empty() ? "" : ": " + finish_message) + "." + said +
                         " One retry may help; if it keeps happening, rephrase the prompt.");
  }
  const std::string reason = finish.empty() ? std::string("none") : finish;
  if (!answer.text.empty()) {
    SetFailure(info, FailureKind::kTerminal);
    return MakeError(ErrorCode::kFailedPrecondition,
                     "Gemini answered with text but no image (finishReason " + reason + ")." +
                         said +
                         " It may have refused or asked a question; rephrase the prompt "
                         "(retrying the same request rarely helps).");
  }
  SetFailure(info, FailureKind::kRetryOnce);
  return MakeError(ErrorCode::kUnavailable, "Gemini returned an empty answer (finishReason " +
                                                reason +
                                                ", no image, no text). Retrying may help.");
}

// The image of the chosen inlineData: its base64 decoded, its type read from its magic bytes
// (never from the label).
Result<BackendImage> DecodeImage(const LiftedJson& parsed, const Json& image_part,
                                 ResponseInfo* info) {
  const std::optional<std::string_view> data = parsed.String(Field(image_part, "data"));
  if (!data || data->empty()) {
    SetFailure(info, FailureKind::kRetryOnce);
    return MakeError(ErrorCode::kUnavailable,
                     "Gemini returned an image part without data. Retrying may help.");
  }
  auto bytes = Base64Decode(*data);
  if (!bytes.ok()) {
    SetFailure(info, FailureKind::kRetryOnce);
    return MakeError(ErrorCode::kUnavailable,
                     "Gemini returned image data that is not valid base64 (" +
                         Tidy(bytes.error().message) + "). Retrying may help.");
  }
  const imaging::ImageFormat format = imaging::SniffFormat(*bytes);
  if (format == imaging::ImageFormat::kUnknown) {
    const std::string label = Tidy(parsed.StringField(image_part, "mimeType", "mime_type"));
    SetFailure(info, FailureKind::kRetryOnce);
    return MakeError(ErrorCode::kUnavailable,
                     "Gemini returned data labelled \"" + label + "\" (" +
                         std::to_string(bytes->size()) +
                         " bytes) that is not a recognised image. Retrying may help.");
  }
  BackendImage image;
  image.bytes = std::move(bytes).value();
  image.mime_type = imaging::MimeTypeOf(format);
  return image;
}

}  // namespace

Result<std::string> BuildGenerateRequest(const imaging::GenerateRequest& request,
                                         const imaging::ModelCapabilities& model) {
  return BuildBody(model, request.options, /*generation=*/true, request.prompt,
                   ReferenceParts(request.references), {});
}

Result<std::string> BuildEditRequest(const imaging::EditRequest& request,
                                     const imaging::ModelCapabilities& model) {
  std::vector<Part> parts;
  // In a chain the base image is the last turn's answer, replayed as the model sent it.
  if (request.chain.empty()) parts.push_back({&request.base, "the image to edit"});
  for (Part& p : ReferenceParts(request.references)) parts.push_back(std::move(p));
  return BuildBody(model, request.options, /*generation=*/false, request.prompt, parts,
                   request.chain);
}

Result<BackendImage> ParseGenerateResponse(int http_status, std::string_view body,
                                           ResponseInfo* info) {
  if (info != nullptr) *info = ResponseInfo{};
  if (info != nullptr) info->failure.http_status = http_status;
  if (http_status != 200) return HttpError(http_status, body, info);

  const LiftedJson parsed(body);
  const Json& doc = parsed.doc();
  if (!doc.is_object()) {
    SetFailure(info, FailureKind::kRetryOnce);
    return MakeError(ErrorCode::kUnavailable,
                     "Gemini returned a response that is not valid JSON (" +
                         std::to_string(body.size()) +
                         " bytes); it was probably truncated or corrupted on the way. Retrying "
                         "may help.");
  }
  const Json* candidates = Field(doc, "candidates");
  if (candidates == nullptr || !candidates->is_array() || candidates->empty()) {
    return NoCandidatesError(parsed, info);
  }

  const Json& candidate = (*candidates)[0];
  const std::string finish = parsed.StringField(candidate, "finishReason", "finish_reason");
  if (info != nullptr) info->finish_reason = finish;
  AnswerParts answer = ReadAnswerParts(parsed, candidate);
  if (std::optional<Error> error = NoImageError(parsed, candidate, finish, answer, info)) {
    return *std::move(error);
  }
  ASSIGN_OR_RETURN(BackendImage image, DecodeImage(parsed, *answer.image, info));
  image.text = std::move(answer.text);
  image.finish_reason = finish;
  if (const Json* usage = Field(doc, "usageMetadata", "usage_metadata");
      usage != nullptr && usage->is_object()) {
    image.usage = parsed.Restore(*usage);
  }
  image.sources = GroundingSources(parsed, candidate);
  image.grounding_queries = GroundingQueries(candidate);
  image.replay = ReplayData(parsed, *answer.parts, answer.image_index);
  SetFailure(info, FailureKind::kNone);
  return image;
}

}  // namespace imgmcp::gemini
