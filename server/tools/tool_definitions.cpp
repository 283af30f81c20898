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

Json VersionOutputSchema(bool with_history) {
  Json props = {
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
      {"prompt", {{"type", "string"}}},
      {"created_at", {{"type", "string"}}},
      {"parent_version", {{"type", "integer"}}},
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
      {"cleared", {{"type", "boolean"}}},
      {"next_version", {{"type", "integer"}}},
  };
  if (with_history) {
    props["history"] = {
        {"type", "array"},
        {"items",
         {{"type", "object"},
          {"properties",
           {{"version", {{"type", "integer"}}},
            {"operation", {{"type", "string"}}},
            {"prompt", {{"type", "string"}}},
            {"created_at", {{"type", "string"}}},
            {"mime_type", {{"type", "string"}}},
            {"bytes", {{"type", "integer"}}},
            {"params", ParamsSchema()}}},
          {"required", {"version", "operation", "prompt", "created_at", "mime_type", "bytes"}}}}};
  }
  return {{"type", "object"},
          {"properties", props},
          {"required",
           {"session_id", "version", "width", "height", "mime_type", "bytes", "sha256", "path",
            "uri", "backend", "model"}}};
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
      "image.";
  d.input_schema = ArgumentsSchema<GenerateImageArgs>(options);
  d.output_schema = VersionOutputSchema(false);
  d.annotations = Hints(/*read_only=*/false, /*destructive=*/false, /*idempotent=*/false,
                        /*open_world=*/true);
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
      "edit an older version; image to start from an outside image (it is saved as its own "
      "version first). context \"chain\" makes the edit a conversation that replays the "
      "model's earlier answers, so it keeps its reasoning across edits; model, image_size, "
      "thinking and search as for generate_image.";
  d.input_schema = ArgumentsSchema<EditImageArgs>(options);
  d.output_schema = VersionOutputSchema(false);
  d.annotations = Hints(/*read_only=*/false, /*destructive=*/false, /*idempotent=*/false,
                        /*open_world=*/true);
  return d;
}

mcp::ToolDefinition GetImageDefinition(const ArgumentOptions& options) {
  mcp::ToolDefinition d;
  d.name = "get_image";
  d.title = "Get image";
  d.description =
      "Read a session's current image (or an earlier version) and its history of versions "
      "(number, operation, prompt, time). Changes nothing.";
  d.input_schema = ArgumentsSchema<GetImageArgs>(options);
  d.output_schema = VersionOutputSchema(true);
  d.annotations = Hints(/*read_only=*/true, /*destructive=*/false, /*idempotent=*/true,
                        /*open_world=*/false);
  d.quick = true;  // reads committed versions: no turn, no progress
  return d;
}

mcp::ToolDefinition ResetSessionDefinition(const ArgumentOptions& options) {
  mcp::ToolDefinition d;
  d.name = "reset_session";
  d.title = "Reset session";
  d.description =
      "Without to_version: remove all images of the session (version numbers keep counting; a "
      "number is never reused). With to_version: revert, i.e. save a copy of that version as the "
      "new current version (nothing is deleted).";
  d.input_schema = ArgumentsSchema<ResetSessionArgs>(options);
  d.output_schema = VersionOutputSchema(false);
  d.annotations = Hints(/*read_only=*/false, /*destructive=*/true, /*idempotent=*/true,
                        /*open_world=*/false);
  return d;
}

}  // namespace imgmcp::tools
