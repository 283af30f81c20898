// The typed arguments of the four image tools (README.md, "Tools"), each listed once: the member,
// how it is parsed and checked, and its description in the inputSchema (see arguments.h). To add an
// optional field to a tool: add the member and one line in its Fields(); the parser, the schema
// and the error messages follow from that line.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"
#include "imaging/call_cost.h"
#include "server/tools/arguments.h"
#include "server/tools/image_input.h"
#include "server/tools/save_target.h"
#include "server/tools/tool_results.h"

namespace imgmcp::tools {

// Version numbers accepted in arguments.
inline constexpr int64_t kMaxVersionNumber = 1'000'000'000'000;

const EnumChoices<InlineMode>& InlineModeChoices();
const std::vector<std::string>& ContextNames();  // "image" (the default), "chain"

// Fills options' model_ids, image_sizes, aspect_ratios, thinking_levels and models_description
// from the backend's rows (ImageBackend::Models(), the default first): the schemas list what at
// least one model offers; CheckGenerationOptions then holds each call to its model's row.
void OfferModels(const std::vector<imaging::ModelCapabilities>& models, ArgumentOptions& options);

// Descriptions shared by several tools.
extern const char kInlineDescription[];
extern const char kReferenceImagesDescription[];
extern const char kReferenceImageDescription[];
extern const char kExistingSessionIdDescription[];  // session_id of edit, get, reset

// session_id is mirrored into the HTTP header Mcp-Param-Session-Id (SEP-2243, "x-mcp-header"), so
// a load balancer can send a session's calls to one replica without reading bodies; the HTTP
// transport checks the header against the body (server/http/request_checks.h).
inline constexpr char kSessionIdHeaderName[] = "Session-Id";
// An inputSchema (ArgumentsSchema) with its session_id property so annotated. The annotation is an
// unknown keyword to JSON Schema, which ADK's conversion to Gemini declarations leaves out.
Json WithSessionIdHeader(Json input_schema);

extern const char kImageSizeDescription[];
extern const char kThinkingDescription[];
extern const char kSearchDescription[];
extern const char kMaxCostDescription[];
extern const char kEstimateOnlyDescription[];
// The most max_cost_usd may be: a cap above it is a typo, not a cap.
inline constexpr double kMostMaxCostUsd = 1000;
extern const char kContextDescription[];
extern const char kIdempotencyKeyDescription[];  // of edit and reset; generate adds a sentence
extern const char kGenerateIdempotencyKeyDescription[];
extern const char kDeliveryDescription[];
// generate_image's `delivery`: "now" (the default) or "batch" (README.md, "Half price for work
// that can wait").
const std::vector<std::string>& DeliveryChoices();
// The status message of a batch task until its window has passed.
std::string BatchWaitingMessage(std::chrono::milliseconds window);

// The generation parameters of generate_image and edit_image (docs/generation.md). Which values a
// model takes is its capability row's business: parsing only checks the vocabulary, the handlers
// check the row (imaging::CheckGenerationOptions) before any backend call.
struct GenerationArgs {
  std::optional<std::string> model;       // default: the backend's default model
  std::optional<std::string> image_size;  // default: the model's (1K), nothing sent
  std::optional<std::string> thinking;    // one of the chosen model's levels
  std::optional<bool> search;             // Google Search grounding
  // Cost (README.md, "What it costs"): a cap on the call's worst-case estimate, and asking for
  // the estimate alone (nothing is called or committed).
  std::optional<double> max_cost_usd;
  std::optional<bool> estimate_only;

  template <typename V>
  void Fields(V& v) {
    v.Enum("model", model, v.options().model_ids, v.options().models_description,
           v.options().model_note);
    v.Enum("image_size", image_size, v.options().image_sizes, kImageSizeDescription);
    v.Enum("thinking", thinking, v.options().thinking_levels, kThinkingDescription);
    v.Bool("search", search, kSearchDescription);
    v.Number("max_cost_usd", max_cost_usd, 0, kMostMaxCostUsd, kMaxCostDescription);
    v.Bool("estimate_only", estimate_only, kEstimateOnlyDescription);
  }
  // As the backend takes them (aspect ratio, chain and image count left to the caller).
  imaging::GenerationOptions Options() const;
  // What its estimate reads (imaging/call_cost.h), for `options` (Options(), the model chosen).
  imaging::CostInputs CostInputs(const imaging::GenerationOptions& options) const;
};

struct GenerateImageArgs {
  std::string prompt;
  std::optional<std::string> session_id;  // minted when absent
  std::optional<std::string> aspect_ratio;
  std::vector<ImageInputArg> reference_images;
  InlineMode inline_mode = InlineMode::kPreview;
  GenerationArgs generation;
  SaveArgs save;  // a copy where the caller wants it (save_target.h)
  std::optional<std::string> idempotency_key;
  std::optional<std::string> delivery;  // "now" (default) | "batch"

  bool Batch() const { return delivery == "batch"; }
  // The generation options it asks for: the model's, aspect_ratio, and the reference images.
  imaging::GenerationOptions Options() const;
  // What its estimate reads (imaging/call_cost.h), for `options` (Options(), the model chosen).
  imaging::CostInputs CostInputs(const imaging::GenerationOptions& options) const;

  template <typename V>
  void Fields(V& v) {
    v.Prompt("prompt", prompt, "What the image should show.");
    v.SessionId("session_id", session_id,
                "Editing session to add the image to; 1 to 64 characters from A-Z a-z 0-9 . _ -, "
                "starting with a letter or digit. Omit to start a new session.");
    v.Enum("aspect_ratio", aspect_ratio, v.options().aspect_ratios,
           "Width:height of the image. Default 1:1. 1:4, 4:1, 1:8 and 8:1 only on the models "
           "that list them under 'model'.");
    v.Objects("reference_images", reference_images, v.options().max_reference_images, "images",
              kReferenceImageDescription, kReferenceImagesDescription);
    v.Enum("inline", inline_mode, InlineModeChoices(), kInlineDescription);
    generation.Fields(v);
    save.Fields(v);
    v.IdempotencyKey("idempotency_key", idempotency_key, kGenerateIdempotencyKeyDescription);
    v.Enum("delivery", delivery, DeliveryChoices(), kDeliveryDescription);
  }
  Status Check(const std::string& where) const { return save.Check(where); }
  // The session the image goes to: session_id; without it, with an idempotency_key, a session
  // named after the key (so a repeat finds the session its first call made); else nullopt (the
  // handler mints a new one).
  std::optional<std::string> SessionFor() const;
};

struct EditImageArgs {
  std::string session_id;
  std::string prompt;
  std::optional<int64_t> expected_version;
  std::optional<int64_t> from_version;
  std::optional<ImageInputArg> image;
  std::vector<ImageInputArg> reference_images;
  InlineMode inline_mode = InlineMode::kPreview;
  GenerationArgs generation;
  std::optional<std::string> context;  // "image" (default) | "chain"
  SaveArgs save;
  std::optional<std::string> idempotency_key;

  template <typename V>
  void Fields(V& v) {
    v.SessionId("session_id", session_id, kExistingSessionIdDescription);
    v.Prompt("prompt", prompt, "The edit instruction.");
    v.Integer("expected_version", expected_version, 0, kMaxVersionNumber,
              "Optional. The version you expect to be current; if the session is at another "
              "version the call fails with a version conflict and nothing changes.");
    v.Integer("from_version", from_version, 1, kMaxVersionNumber,
              "Optional. Edit this earlier version instead of the current one.");
    v.Object("image", image,
             "Optional base image: {\"path\": ...} or {\"data\": <base64>, \"mime_type\": ...}. "
             "Needed when the session has no image yet.");
    v.Objects("reference_images", reference_images, v.options().max_reference_images, "images",
              kReferenceImageDescription, kReferenceImagesDescription);
    v.Enum("inline", inline_mode, InlineModeChoices(), kInlineDescription);
    generation.Fields(v);
    v.Enum("context", context, ContextNames(), kContextDescription);
    save.Fields(v);
    v.IdempotencyKey("idempotency_key", idempotency_key, kIdempotencyKeyDescription);
  }
  bool chain() const { return context == "chain"; }
  // 'image' and 'from_version' exclude each other; the save arguments agree.
  Status Check(const std::string& where) const;
};

// History in get_image results: a page of the newest entries, never the whole chain.
inline constexpr int64_t kDefaultHistoryLimit = 20;
inline constexpr int64_t kMaxHistoryLimit = 100;

struct GetImageArgs {
  std::string session_id;
  std::optional<int64_t> version;  // default: the current one
  InlineMode inline_mode = InlineMode::kPreview;
  std::optional<bool> include_history;    // default true
  std::optional<int64_t> history_limit;   // default kDefaultHistoryLimit
  std::optional<int64_t> history_before;  // page back: only versions below this number
  SaveArgs save;

  template <typename V>
  void Fields(V& v) {
    v.SessionId("session_id", session_id, kExistingSessionIdDescription);
    v.Integer("version", version, 1, kMaxVersionNumber,
              "Optional version number; default the current.");
    v.Enum("inline", inline_mode, InlineModeChoices(), kInlineDescription);
    v.Bool("include_history", include_history,
           "Include a page of the version history (default true).");
    v.Integer("history_limit", history_limit, 1, kMaxHistoryLimit,
              "Optional. How many history entries, newest first chosen, listed oldest first: 1 to "
              "100, default 20.");
    v.Integer("history_before", history_before, 1, kMaxVersionNumber,
              "Optional. Only versions below this number: pass the previous result's "
              "history_more_before to read older entries.");
    save.Fields(v);
  }
  Status Check(const std::string& where) const { return save.Check(where); }
};

struct ResetSessionArgs {
  std::string session_id;
  std::optional<int64_t> to_version;  // absent: clear the session
  std::optional<std::string> idempotency_key;

  template <typename V>
  void Fields(V& v) {
    v.SessionId("session_id", session_id, kExistingSessionIdDescription);
    // null is refused: taken as absent, it would clear the whole session.
    v.Integer("to_version", to_version, 1, kMaxVersionNumber,
              "Optional version to revert to (saved as a new version). Leave it out to delete "
              "every image of the session.",
              NullIs::kRefused);
    v.IdempotencyKey("idempotency_key", idempotency_key, kIdempotencyKeyDescription);
  }
};

}  // namespace imgmcp::tools
