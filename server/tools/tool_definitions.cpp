// Names, descriptions and schemas of the four tools. Input schemas stay inside Gemini's
// function-declaration subset (plain objects, arrays, string enums) so ADK can declare them;
// ranges and patterns are stated in descriptions and enforced by the handlers.
#include "server/tools/image_tools.h"

namespace imgmcp::tools {
namespace {

Json SessionIdSchema(const std::string& description) {
  return {{"type", "string"}, {"description", description}};
}

Json InlineSchema() {
  return {{"type", "string"},
          {"enum", {"preview", "full", "none"}},
          {"description",
           "How the image comes back in the result: \"preview\" (default; long edge at most 768 "
           "px and about 600 KB, fine for looking at it), \"full\" (the full-resolution bytes), "
           "or \"none\" (no image bytes; read the resource_link or the file path instead — best "
           "for agents that pass tool results on as text, such as ADK)."}};
}

Json ImageInputSchema(const std::string& description) {
  return {{"type", "object"},
          {"description", description},
          {"properties",
           {{"path",
             {{"type", "string"},
              {"description",
               "Path of an image file on the server's machine, inside an allowed directory."}}},
            {"data", {{"type", "string"}, {"description", "The image bytes, base64-encoded."}}},
            {"mime_type",
             {{"type", "string"},
              {"enum", {"image/png", "image/jpeg", "image/webp", "image/gif"}},
              {"description", "Required with data. The real type is read from the bytes."}}}}}};
}

Json ReferenceImagesSchema() {
  return {{"type", "array"},
          {"description",
           "Optional extra images that guide the result (style, subject), at most 14. Each is "
           "{\"path\": ...} or {\"data\": ..., \"mime_type\": ...}."},
          {"items", ImageInputSchema("A reference image.")}};
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
      {"text", {{"type", "string"}, {"description", "Text the model returned with the image"}}},
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
            {"bytes", {{"type", "integer"}}}}},
          {"required", {"version", "operation", "prompt", "created_at", "mime_type", "bytes"}}}}};
  }
  return {{"type", "object"},
          {"properties", props},
          {"required",
           {"session_id", "version", "width", "height", "mime_type", "bytes", "sha256", "path",
            "uri", "backend", "model"}}};
}

constexpr const char* kSessionIdRule =
    "1 to 64 characters from A-Z a-z 0-9 . _ -, starting with a letter or digit";

// session_id of a session that already exists (edit, get, reset).
Json ExistingSessionIdSchema() {
  return SessionIdSchema(std::string("The editing session; ") + kSessionIdRule + ".");
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

mcp::ToolDefinition GenerateImageDefinition() {
  mcp::ToolDefinition d;
  d.name = "generate_image";
  d.title = "Generate image";
  d.description =
      "Create a new image from a text prompt. The image becomes the next version of the editing "
      "session `session_id` (the session is created if new; a new id is minted when omitted — "
      "reuse the returned session_id for edit_image). Returns the version number, size, file "
      "path and a resource link; by default also a small preview image.";
  d.input_schema = {
      {"type", "object"},
      {"properties",
       {{"prompt", {{"type", "string"}, {"description", "What the image should show."}}},
        {"session_id", SessionIdSchema(std::string("Editing session to add the image to; ") +
                                       kSessionIdRule + ". Omit to start a new session.")},
        {"aspect_ratio",
         {{"type", "string"},
          {"enum", {"1:1", "2:3", "3:2", "3:4", "4:3", "4:5", "5:4", "9:16", "16:9", "21:9"}},
          {"description", "Width:height of the image. Default 1:1."}}},
        {"reference_images", ReferenceImagesSchema()},
        {"inline", InlineSchema()}}},
      {"required", {"prompt"}}};
  d.output_schema = VersionOutputSchema(false);
  d.annotations = Hints(/*read_only=*/false, /*destructive=*/false, /*idempotent=*/false,
                        /*open_world=*/true);
  return d;
}

mcp::ToolDefinition EditImageDefinition() {
  mcp::ToolDefinition d;
  d.name = "edit_image";
  d.title = "Edit image";
  d.description =
      "Apply a text instruction to the current image of a session and save the result as the "
      "next version. Edits of one session run one after another in the order they arrive, each "
      "on the result of the previous one, so several edits can be sent without waiting. Pass "
      "expected_version to fail instead of editing a newer image than you saw; from_version to "
      "edit an older version; image to start from an outside image (it is saved as its own "
      "version first).";
  d.input_schema = {
      {"type", "object"},
      {"properties",
       {{"session_id", ExistingSessionIdSchema()},
        {"prompt", {{"type", "string"}, {"description", "The edit instruction."}}},
        {"expected_version",
         {{"type", "integer"},
          {"description",
           "Optional. The version you expect to be current; if the session is at another "
           "version the call fails with a version conflict and nothing changes."}}},
        {"from_version",
         {{"type", "integer"},
          {"description", "Optional. Edit this earlier version instead of the current one."}}},
        {"image",
         ImageInputSchema("Optional base image: {\"path\": ...} or {\"data\": <base64>, "
                          "\"mime_type\": ...}. Needed when the session has no image yet.")},
        {"reference_images", ReferenceImagesSchema()},
        {"inline", InlineSchema()}}},
      {"required", {"session_id", "prompt"}}};
  d.output_schema = VersionOutputSchema(false);
  d.annotations = Hints(/*read_only=*/false, /*destructive=*/false, /*idempotent=*/false,
                        /*open_world=*/true);
  return d;
}

mcp::ToolDefinition GetImageDefinition() {
  mcp::ToolDefinition d;
  d.name = "get_image";
  d.title = "Get image";
  d.description =
      "Read a session's current image (or an earlier version) and its history of versions "
      "(number, operation, prompt, time). Changes nothing.";
  d.input_schema = {
      {"type", "object"},
      {"properties",
       {{"session_id", ExistingSessionIdSchema()},
        {"version",
         {{"type", "integer"}, {"description", "Optional version number; default the current."}}},
        {"inline", InlineSchema()},
        {"include_history",
         {{"type", "boolean"}, {"description", "Include the version history (default true)."}}}}},
      {"required", {"session_id"}}};
  d.output_schema = VersionOutputSchema(true);
  d.annotations = Hints(/*read_only=*/true, /*destructive=*/false, /*idempotent=*/true,
                        /*open_world=*/false);
  d.quick = true;  // reads committed versions: no turn, no progress
  return d;
}

mcp::ToolDefinition ResetSessionDefinition() {
  mcp::ToolDefinition d;
  d.name = "reset_session";
  d.title = "Reset session";
  d.description =
      "Without to_version: remove all images of the session (version numbers keep counting; a "
      "number is never reused). With to_version: revert, i.e. save a copy of that version as the "
      "new current version (nothing is deleted).";
  d.input_schema = {
      {"type", "object"},
      {"properties",
       {{"session_id", ExistingSessionIdSchema()},
        {"to_version",
         {{"type", "integer"},
          {"description", "Optional version to revert to (saved as a new version)."}}}}},
      {"required", {"session_id"}}};
  d.output_schema = VersionOutputSchema(false);
  d.annotations = Hints(/*read_only=*/false, /*destructive=*/true, /*idempotent=*/true,
                        /*open_world=*/false);
  return d;
}

}  // namespace imgmcp::tools
