// The tools' output schemas, pinned whole: clients and agents read these, so a change to how the
// schema is written must not change the JSON it produces.
#include <gtest/gtest.h>

#include "server/tools/image_tools.h"

namespace imgmcp::tools {
namespace {

// get_image's outputSchema as clients receive it.
constexpr char kGetImageOutputSchema[] = R"json(
{
  "properties": {
    "backend": {"enum": ["gemini", "local"], "type": "string"},
    "bytes": {"type": "integer"},
    "cleared": {"type": "boolean"},
    "cost": {
      "description": "What this call cost (README.md, \"What it costs\"): usd, from the tokens the backend reported priced with priced_model's prices; 0 on the local backend",
      "properties": {
        "grounding_queries": {"type": "integer"},
        "input_tokens": {"type": "integer"},
        "output_image_tokens": {"type": "integer"},
        "output_text_tokens": {"type": "integer"},
        "priced_model": {"type": "string"},
        "thoughts_tokens": {"type": "integer"},
        "usd": {"type": "number"}
      },
      "type": "object"
    },
    "created_at": {"type": "string"},
    "estimate": {
      "description": "The call's worst-case cost before any request: what max_cost_usd and the budgets are checked against",
      "properties": {
        "grounding_queries": {"type": "integer"},
        "input_tokens": {"type": "integer"},
        "output_image_tokens": {"type": "integer"},
        "output_text_tokens": {"type": "integer"},
        "priced_model": {"type": "string"},
        "thoughts_tokens": {"type": "integer"},
        "usd": {"type": "number"}
      },
      "type": "object"
    },
    "estimate_only": {"description": "true: only the estimate was made", "type": "boolean"},
    "finish_reason": {"description": "Why the model stopped, e.g. STOP", "type": "string"},
    "gallery_url": {
      "description": "get_image over HTTP: the /gallery page showing this session. With OAuth it carries a signed token that opens this session alone, read-only, until it expires (--gallery-link-ttl), so a browser needs no access token",
      "type": "string"
    },
    "height": {"type": "integer"},
    "history": {
      "description": "A page of the versions the session keeps, oldest first: the newest history_limit (default 20) below history_before",
      "items": {
        "properties": {
          "bytes": {"type": "integer"},
          "created_at": {"type": "string"},
          "mime_type": {"type": "string"},
          "operation": {"type": "string"},
          "params": {
            "description": "The generation parameters this version was made with: model, and image_size, aspect_ratio, thinking, search, context when given; replayed_versions for a chain edit",
            "properties": {
              "aspect_ratio": {"type": "string"},
              "context": {"type": "string"},
              "image_size": {"type": "string"},
              "model": {"type": "string"},
              "replayed_versions": {"items": {"type": "integer"}, "type": "array"},
              "search": {"type": "boolean"},
              "thinking": {"type": "string"}
            },
            "type": "object"
          },
          "parent_version": {
            "description": "An edit's base version, a revert's source version",
            "type": "integer"
          },
          "prompt": {"description": "Cut to 120 bytes", "type": "string"},
          "prompt_bytes": {"type": "integer"},
          "prompt_truncated": {"type": "boolean"},
          "sha256": {"type": "string"},
          "version": {"type": "integer"}
        },
        "required": ["version", "operation", "prompt", "created_at", "mime_type", "bytes", "sha256"],
        "type": "object"
      },
      "type": "array"
    },
    "history_more_before": {
      "description": "Present when older versions exist: pass it as history_before",
      "type": "integer"
    },
    "history_total": {"description": "How many versions the session keeps", "type": "integer"},
    "mime_type": {"type": "string"},
    "model": {"type": "string"},
    "model_text": {
      "description": "The model's own text returned with the image (thoughts left out)",
      "type": "string"
    },
    "next_version": {"type": "integer"},
    "operation": {"type": "string"},
    "params": {
      "description": "The generation parameters this version was made with: model, and image_size, aspect_ratio, thinking, search, context when given; replayed_versions for a chain edit",
      "properties": {
        "aspect_ratio": {"type": "string"},
        "context": {"type": "string"},
        "image_size": {"type": "string"},
        "model": {"type": "string"},
        "replayed_versions": {"items": {"type": "integer"}, "type": "array"},
        "search": {"type": "boolean"},
        "thinking": {"type": "string"}
      },
      "type": "object"
    },
    "parent_version": {
      "description": "The version this one was made from (an edit's base, a revert's source)",
      "type": "integer"
    },
    "path": {"description": "Absolute path of this version's file", "type": "string"},
    "prompt": {
      "description": "The version's prompt, cut to 300 bytes (the session's manifest resource has it whole)",
      "type": "string"
    },
    "prompt_bytes": {"description": "Length of the whole prompt", "type": "integer"},
    "prompt_truncated": {"type": "boolean"},
    "repeated": {
      "description": "true: this call repeated an earlier one's idempotency_key and arguments; the result is the earlier call's, and nothing was done again",
      "type": "boolean"
    },
    "save_error": {
      "description": "With save_to: why the copy was not written. The version was committed all the same; get_image with its version and save_to tries again",
      "type": "string"
    },
    "saved_bytes": {"description": "Size of the copy written", "type": "integer"},
    "saved_format": {
      "description": "Format of the copy written",
      "enum": ["png", "jpeg", "webp", "gif"],
      "type": "string"
    },
    "saved_to": {
      "description": "With save_to: the absolute path of the copy written",
      "type": "string"
    },
    "session_cost_usd": {
      "description": "get_image: every call this session paid for, reverted and cleared versions included",
      "type": "number"
    },
    "session_id": {"type": "string"},
    "sha256": {"type": "string"},
    "sources": {
      "description": "With search: the web sources the image was grounded in",
      "items": {
        "properties": {"title": {"type": "string"}, "uri": {"type": "string"}},
        "required": ["title", "uri"],
        "type": "object"
      },
      "type": "array"
    },
    "text": {
      "description": "Text the model returned with the image (older name of model_text)",
      "type": "string"
    },
    "uri": {"description": "Resource URI of this version's image", "type": "string"},
    "usage": {
      "description": "Token counts as the backend reported them (Gemini's usageMetadata: promptTokenCount, candidatesTokenCount, thoughtsTokenCount, totalTokenCount, …)",
      "type": "object"
    },
    "version": {"description": "0 when the session has no image", "type": "integer"},
    "width": {"type": "integer"}
  },
  "required": [
    "session_id",
    "version",
    "width",
    "height",
    "mime_type",
    "bytes",
    "sha256",
    "path",
    "uri",
    "backend",
    "model"
  ],
  "type": "object"
}
)json";

Json GetImageOutputSchema() { return Json::parse(kGetImageOutputSchema); }

TEST(ToolDefinitionsTest, GetImageOutputSchemaIsPinned) {
  const Json actual = GetImageDefinition(ArgumentOptions()).output_schema.value_or(Json());
  EXPECT_EQ(actual, GetImageOutputSchema()) << actual.dump(2);
}

// The other three tools have no history: the same schema without its three history fields.
TEST(ToolDefinitionsTest, OtherOutputSchemasAreGetImagesWithoutHistory) {
  Json expected = GetImageOutputSchema();
  for (const char* field : {"history", "history_total", "history_more_before"}) {
    ASSERT_EQ(expected["properties"].erase(field), 1u) << field;
  }
  const ArgumentOptions options;
  for (const mcp::ToolDefinition& d :
       {GenerateImageDefinition(options), EditImageDefinition(options),
        ResetSessionDefinition(options)}) {
    EXPECT_EQ(d.output_schema.value_or(Json()), expected) << d.name;
  }
}

}  // namespace
}  // namespace imgmcp::tools
