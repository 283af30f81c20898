// Names, descriptions, output schemas and annotations of the four tools. Input schemas come from
// the typed argument structs (tool_args.h), so a field's schema and its parsing cannot drift.
#include "server/tools/image_tools.h"
#include "server/tools/tool_args.h"

namespace imgmcp::tools {
namespace {

// The generation parameters a version was made with (generate and edit).
Json ParamsSchema() {
  return {{"type", "object"},
          {"description",
           "The generation parameters this version was made with: model, and image_size, "
           "aspect_ratio, thinking, search, context when given; replayed_versions for a chain "
           "edit"},
          {"properties",
           {{"model", {{"type", "string"}}},
            {"image_size", {{"type", "string"}}},
            {"aspect_ratio", {{"type", "string"}}},
            {"thinking", {{"type", "string"}}},
            {"search", {{"type", "boolean"}}},
            {"context", {{"type", "string"}}},
            {"replayed_versions", {{"type", "array"}, {"items", {{"type", "integer"}}}}}}}};
}

// What every version result has: the version and where its image is.
Json VersionFields() {
  return {
      {"session_id", {{"type", "string"}}},
      {"version", {{"type", "integer"}, {"description", "0 when the session has no image"}}},
      {"width", {{"type", "integer"}}},
      {"height", {{"type", "integer"}}},
      {"mime_type", {{"type", "string"}}},
      {"bytes", {{"type", "integer"}}},
      {"sha256", {{"type", "string"}}},
      {"path", {{"type", "string"}, {"description", "Absolute path of this version's file"}}},
      {"uri", {{"type", "string"}, {"description", "Resource URI of this version's image"}}},
      {"backend", {{"type", "string"}, {"enum", {"gemini", "local"}}}},
      {"model", {{"type", "string"}}},
      {"operation", {{"type", "string"}}},
      {"prompt",
       {{"type", "string"},
        {"description",
         "The version's prompt, cut to 300 bytes (the session's manifest resource "
         "has it whole)"}}},
      {"prompt_truncated", {{"type", "boolean"}}},
      {"prompt_bytes", {{"type", "integer"}, {"description", "Length of the whole prompt"}}},
      {"created_at", {{"type", "string"}}},
      {"parent_version",
       {{"type", "integer"},
        {"description", "The version this one was made from (an edit's base, a revert's source)"}}},
      {"repeated",
       {{"type", "boolean"},
        {"description",
         "true: this call repeated an earlier one's idempotency_key and arguments; the result is "
         "the earlier call's, and nothing was done again"}}},
  };
}

// A cost or an estimate (imaging::CostJson).
Json CostProperties() {
  return {{"usd", {{"type", "number"}}},
          {"input_tokens", {{"type", "integer"}}},
          {"output_image_tokens", {{"type", "integer"}}},
          {"output_text_tokens", {{"type", "integer"}}},
          {"thoughts_tokens", {{"type", "integer"}}},
          {"grounding_queries", {{"type", "integer"}}},
          {"priced_model", {{"type", "string"}}}};
}

// What a backend call answered besides the image, and what it was asked with.
Json GenerationFields() {
  return {
      {"text",
       {{"type", "string"},
        {"description", "Text the model returned with the image (older name of model_text)"}}},
      {"model_text",
       {{"type", "string"},
        {"description", "The model's own text returned with the image (thoughts left out)"}}},
      {"usage",
       {{"type", "object"},
        {"description",
         "Token counts as the backend reported them (Gemini's usageMetadata: promptTokenCount, "
         "candidatesTokenCount, thoughtsTokenCount, totalTokenCount, …)"}}},
      {"finish_reason", {{"type", "string"}, {"description", "Why the model stopped, e.g. STOP"}}},
      {"sources",
       {{"type", "array"},
        {"description", "With search: the web sources the image was grounded in"},
        {"items",
         {{"type", "object"},
          {"properties", {{"title", {{"type", "string"}}}, {"uri", {{"type", "string"}}}}},
          {"required", {"title", "uri"}}}}}},
      {"params", ParamsSchema()},
      {"cost",
       {{"type", "object"},
        {"description",
         "What this call cost (README.md, \"What it costs\"): usd, from the tokens the backend "
         "reported priced with priced_model's prices; 0 on the local backend"},
        {"properties", CostProperties()}}},
      {"estimate_only", {{"type", "boolean"}, {"description", "true: only the estimate was made"}}},
      {"estimate",
       {{"type", "object"},
        {"description",
         "The call's worst-case cost before any request: what max_cost_usd and the budgets are "
         "checked against"},
        {"properties", CostProperties()}}},
      {"session_cost_usd",
       {{"type", "number"},
        {"description",
         "get_image: every call this session paid for, reverted and cleared versions included"}}},
      {"gallery_url",
       {{"type", "string"},
        {"description",
         "get_image over HTTP: the /gallery page showing this session. With OAuth it carries a "
         "signed token that opens this session alone, read-only, until it expires "
         "(--gallery-link-ttl), so a browser needs no access token"}}},
  };
}

// With save_to: where the copy went, or why it was not written (the version stands either way).
Json SaveFields() {
  return {
      {"saved_to",
       {{"type", "string"},
        {"description", "With save_to: the absolute path of the copy written"}}},
      {"saved_bytes", {{"type", "integer"}, {"description", "Size of the copy written"}}},
      {"saved_format",
       {{"type", "string"},
        {"enum", {"png", "jpeg", "webp", "gif"}},
        {"description", "Format of the copy written"}}},
      {"save_error",
       {{"type", "string"},
        {"description",
         "With save_to: why the copy was not written. The version was committed all the same; "
         "get_image with its version and save_to tries again"}}},
  };
}

// reset_session without to_version: the session was cleared.
Json ClearFields() {
  return {
      {"cleared", {{"type", "boolean"}}},
      {"next_version", {{"type", "integer"}}},
  };
}

// One version in get_image's history.
Json HistoryEntrySchema() {
  return {{"type", "object"},
          {"properties",
           {{"version", {{"type", "integer"}}},
            {"operation", {{"type", "string"}}},
            {"prompt", {{"type", "string"}, {"description", "Cut to 120 bytes"}}},
            {"prompt_truncated", {{"type", "boolean"}}},
            {"prompt_bytes", {{"type", "integer"}}},
            {"created_at", {{"type", "string"}}},
            {"mime_type", {{"type", "string"}}},
            {"bytes", {{"type", "integer"}}},
            {"sha256", {{"type", "string"}}},
            {"parent_version",
             {{"type", "integer"},
              {"description", "An edit's base version, a revert's source version"}}},
            {"params", ParamsSchema()}}},
          {"required",
           {"version", "operation", "prompt", "created_at", "mime_type", "bytes", "sha256"}}};
}

// get_image's page of the history and how to page further.
Json HistoryFields() {
  return {
      {"history",
       {{"type", "array"},
        {"description",
         "A page of the versions the session keeps, oldest first: the newest history_limit "
         "(default 20) below history_before"},
        {"items", HistoryEntrySchema()}}},
      {"history_total",
       {{"type", "integer"}, {"description", "How many versions the session keeps"}}},
      {"history_more_before",
       {{"type", "integer"},
        {"description", "Present when older versions exist: pass it as history_before"}}},
  };
}

Json BuildVersionOutputSchema() {
  Json props = VersionFields();
  props.update(GenerationFields());
  props.update(ClearFields());
  props.update(SaveFields());
  return {{"type", "object"},
          {"properties", std::move(props)},
          {"required",
           {"session_id", "version", "width", "height", "mime_type", "bytes", "sha256", "path",
            "uri", "backend", "model"}}};
}

Json WithHistoryFields(Json schema) {
  schema["properties"].update(HistoryFields());
  return schema;
}

// Built once per variant (three of the four tools share the one without history): building a
// schema from initializer lists costs more than copying it, and a cold start builds every
// definition before it answers.
const Json& VersionOutputSchema(bool with_history) {
  static const Json kWithoutHistory = BuildVersionOutputSchema();
  static const Json kWithHistory = WithHistoryFields(kWithoutHistory);
  return with_history ? kWithHistory : kWithoutHistory;
}

// What the store keeps, told where agents read it.
std::string Retention(const ArgumentOptions& o) {
  std::string s = o.max_versions > 0
                      ? "This server keeps the last " + std::to_string(o.max_versions) +
                            " versions of each session: saving a new version deletes the oldest "
                            "one beyond that."
                      : "This server keeps every version.";
  if (o.idle_days > 0) {
    s += " A session unused for " + std::to_string(o.idle_days) + " days is deleted.";
  }
  return s;
}

mcp::ToolAnnotations Hints(bool read_only, bool destructive, bool idempotent, bool open_world) {
  mcp::ToolAnnotations a;
  a.read_only = read_only;
  a.destructive = destructive;
  a.idempotent = idempotent;
  a.open_world = open_world;
  return a;
}

}  // namespace

mcp::ToolDefinition GenerateImageDefinition(const ArgumentOptions& options) {
  mcp::ToolDefinition d;
  d.name = "generate_image";
  d.title = "Generate image";
  d.description =
      "Create a new image from a text prompt. The image becomes the next version of the editing "
      "session `session_id` (the session is created if new; a new id is minted when omitted — "
      "reuse the returned session_id for edit_image). Optional model, image_size, thinking and "
      "search (Google Search grounding) choose how it is made; each model's options are listed "
      "under 'model'. Returns the version number, size, file path and a resource link, the "
      "model's text, token usage and (with search) its sources; by default also a small preview "
      "image. save_to also writes a copy where the user wants it (e.g. \"assets/hero.png\"). "
      "idempotency_key makes a retried call safe: it is done once. " +
      Retention(options);
  d.input_schema = WithSessionIdHeader(ArgumentsSchema<GenerateImageArgs>(options));
  d.output_schema = VersionOutputSchema(false);
  // A client that declared the tasks extension gets a task to poll (mcp/task_runner.h).
  d.task_support = mcp::TaskSupport::kOptional;
  // Destructive when retention is on: a new version can delete the oldest one.
  d.annotations = Hints(/*read_only=*/false, /*destructive=*/options.max_versions > 0,
                        /*idempotent=*/false, /*open_world=*/true);
  return d;
}

mcp::ToolDefinition EditImageDefinition(const ArgumentOptions& options) {
  mcp::ToolDefinition d;
  d.name = "edit_image";
  d.title = "Edit image";
  d.description =
      "Apply a text instruction to the current image of a session and save the result as the "
      "next version. Edits of one session run one after another in the order they arrive, each "
      "on the result of the previous one, so several edits can be sent without waiting. Pass "
      "expected_version to fail instead of editing a newer image than you saw; from_version to "
      "edit an older version; image to start from an outside image (it is saved as a version "
      "of its own, together with the edit: if the edit fails, neither is saved). context "
      "\"chain\" makes the edit a conversation that replays the model's earlier answers, so it "
      "keeps its reasoning across edits; model, image_size, thinking and search as for "
      "generate_image. save_to also writes a copy of the result where the user wants it. "
      "idempotency_key makes a retried call safe: it is done once. " +
      Retention(options);
  d.input_schema = WithSessionIdHeader(ArgumentsSchema<EditImageArgs>(options));
  d.output_schema = VersionOutputSchema(false);
  d.task_support = mcp::TaskSupport::kOptional;  // as generate_image
  d.annotations = Hints(/*read_only=*/false, /*destructive=*/options.max_versions > 0,
                        /*idempotent=*/false, /*open_world=*/true);
  return d;
}

mcp::ToolDefinition GetImageDefinition(const ArgumentOptions& options) {
  mcp::ToolDefinition d;
  d.name = "get_image";
  d.title = "Get image";
  d.description =
      "Read a session's current image (or an earlier version) and a page of its history of "
      "versions (number, operation, prompt, time, parent): the newest 20 by default; "
      "history_limit and history_before page through older ones. Prompts are cut short in "
      "results; the session's manifest resource imgmcp://sessions/{session_id} has them whole. "
      "Changes no session; save_to writes a copy of the version to a file (save_format converts "
      "it). " +
      Retention(options);
  d.input_schema = WithSessionIdHeader(ArgumentsSchema<GetImageArgs>(options));
  d.output_schema = VersionOutputSchema(true);
  d.annotations = Hints(/*read_only=*/true, /*destructive=*/false, /*idempotent=*/true,
                        /*open_world=*/false);
  d.quick = true;  // reads committed versions: no turn, no progress
  d.writing_argument = "save_to";
  return d;
}

mcp::ToolDefinition ResetSessionDefinition(const ArgumentOptions& options) {
  mcp::ToolDefinition d;
  d.name = "reset_session";
  d.title = "Reset session";
  d.description =
      "Without to_version: delete every image of the session, for good (version numbers keep "
      "counting; a number is never reused). With to_version: revert, i.e. save a copy of that "
      "version as a new version; like any new version it can delete the oldest one kept. A "
      "deleted version cannot be reverted to. idempotency_key makes a retried call safe: it is "
      "done once. " +
      Retention(options);
  d.input_schema = WithSessionIdHeader(ArgumentsSchema<ResetSessionArgs>(options));
  d.output_schema = VersionOutputSchema(false);
  // Not idempotent: each revert saves another version, and a clear deletes what came since.
  d.annotations = Hints(/*read_only=*/false, /*destructive=*/true, /*idempotent=*/false,
                        /*open_world=*/false);
  return d;
}

}  // namespace imgmcp::tools
