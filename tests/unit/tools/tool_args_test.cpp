// The typed tool arguments: one field list gives the parser and the inputSchema.
#include "server/tools/tool_args.h"

#include <gtest/gtest.h>

#include "session/data_dir.h"

namespace imgmcp::tools {
namespace {

ArgumentOptions Options() {
  ArgumentOptions o;
  o.max_prompt_bytes = 20;
  o.max_image_data_chars = 16;
  o.max_reference_images = 2;
  return o;
}

template <typename Args>
std::string ErrorOf(const Json& json) {
  auto parsed = ParseArguments<Args>(json, Options());
  EXPECT_FALSE(parsed.ok()) << json.dump();
  return parsed.ok() ? "" : parsed.error().message;
}

TEST(ToolArgsTest, ParsesEveryFieldOfEditImage) {
  Json json = {{"session_id", "s1"},
               {"prompt", "invert"},
               {"expected_version", 3},
               {"image", {{"data", "iVBO"}, {"mime_type", "image/png"}}},
               {"reference_images", {{{"path", "a.png"}}, {{"path", "b.png"}}}},
               {"inline", "none"}};
  auto args = ParseArguments<EditImageArgs>(json, Options());
  ASSERT_TRUE(args.ok()) << args.error().message;
  EXPECT_EQ(args->session_id, "s1");
  EXPECT_EQ(args->prompt, "invert");
  EXPECT_EQ(args->expected_version, 3);
  EXPECT_FALSE(args->from_version.has_value());
  ASSERT_TRUE(args->image.has_value());
  EXPECT_EQ(args->image->data, "iVBO");
  EXPECT_EQ(args->image->mime_type, "image/png");
  ASSERT_EQ(args->reference_images.size(), 2u);
  EXPECT_EQ(args->reference_images[1].path, "b.png");
  EXPECT_EQ(args->inline_mode, InlineMode::kNone);
}

TEST(ToolArgsTest, DefaultsAreTheStructsAndNullIsAbsent) {
  auto args = ParseArguments<GenerateImageArgs>(
      Json{{"prompt", "a fox"}, {"session_id", nullptr}, {"inline", nullptr}}, Options());
  ASSERT_TRUE(args.ok()) << args.error().message;
  EXPECT_FALSE(args->session_id.has_value());
  EXPECT_FALSE(args->aspect_ratio.has_value());
  EXPECT_TRUE(args->reference_images.empty());
  EXPECT_EQ(args->inline_mode, InlineMode::kPreview);
}

TEST(ToolArgsTest, ErrorsNameTheFieldAndWhatIsAllowed) {
  EXPECT_EQ(ErrorOf<GenerateImageArgs>(Json::object()), "missing required field 'prompt'");
  EXPECT_EQ(ErrorOf<GenerateImageArgs>({{"prompt", "  \n"}}), "'prompt' is empty");
  EXPECT_EQ(ErrorOf<GenerateImageArgs>({{"prompt", std::string(21, 'x')}}),
            "'prompt' is 21 bytes; at most 20 are allowed");
  EXPECT_EQ(ErrorOf<GenerateImageArgs>({{"prompt", "x"}, {"aspect_ratio", "7:5"}}),
            "'aspect_ratio' is \"7:5\"; allowed: \"1:1\", \"2:3\", \"3:2\", \"3:4\", \"4:3\", "
            "\"4:5\", \"5:4\", \"9:16\", \"16:9\", \"21:9\", \"1:4\", \"4:1\", \"1:8\", \"8:1\"");
  EXPECT_EQ(ErrorOf<GenerateImageArgs>({{"prompt", "x"}, {"colour", "red"}}),
            "unknown field 'colour'; allowed fields: aspect_ratio, delivery, estimate_only, "
            "idempotency_key, image_size, inline, max_cost_usd, model, overwrite, prompt, "
            "reference_images, save_format, save_quality, save_to, search, session_id, thinking");
  EXPECT_EQ(ErrorOf<GenerateImageArgs>({{"prompt", "x"}, {"delivery", "later"}}),
            "'delivery' is \"later\"; allowed: \"now\", \"batch\"");
  EXPECT_EQ(ErrorOf<GenerateImageArgs>({{"prompt", "x"}, {"max_cost_usd", 0}}),
            "'max_cost_usd' must be a number above 0 and at most 1000, got 0");
  EXPECT_EQ(
      ErrorOf<EditImageArgs>({{"session_id", "s"}, {"prompt", "x"}, {"max_cost_usd", "cheap"}}),
      "'max_cost_usd' must be a number above 0 and at most 1000, got string");
  EXPECT_NE(ErrorOf<GetImageArgs>({{"session_id", "../etc"}})
                .find("'session_id' \"../etc\" is not valid"),
            std::string::npos);
  EXPECT_EQ(ErrorOf<GetImageArgs>({{"session_id", "s"}, {"include_history", "yes"}}),
            "'include_history' must be true or false, got string");
  EXPECT_EQ(ErrorOf<ResetSessionArgs>({{"session_id", "s"}, {"to_version", 0}}),
            "'to_version' is 0, out of range (allowed: an integer from 1 to 1000000000000)");
  EXPECT_EQ(ErrorOf<GetImageArgs>({{"session_id", "s"}, {"inline", "thumb"}}),
            "'inline' is \"thumb\"; allowed: \"preview\", \"full\", \"none\"");
}

TEST(ToolArgsTest, NestedImageErrorsNameThePath) {
  auto edit = [](Json extra) {
    Json json = {{"session_id", "s"}, {"prompt", "x"}};
    json.update(extra);
    return ErrorOf<EditImageArgs>(json);
  };
  EXPECT_EQ(edit({{"image", "a.png"}}), "image must be an object, got string");
  EXPECT_EQ(edit({{"image", {{"path", "a"}, {"data", "b"}}}}),
            "'image' needs exactly one of {\"path\": \"...\"} or {\"data\": \"<base64>\", "
            "\"mime_type\": \"image/png\"}");
  EXPECT_EQ(edit({{"image", {{"path", "a"}, {"mime_type", "image/png"}}}}),
            "'image.mime_type' goes with 'data', not with 'path'");
  EXPECT_EQ(edit({{"image", {{"data", "abc"}}}}),
            "'image.mime_type' is required with 'data' (image/png, image/jpeg, image/webp or "
            "image/gif), unless 'data' is a data: URL");
  // A data URL carries its type: no mime_type needed.
  EXPECT_TRUE(
      ParseArguments<EditImageArgs>(
          Json{{"session_id", "s"}, {"prompt", "x"}, {"image", {{"data", "data:;base64,AA"}}}},
          Options())
          .ok());
  EXPECT_EQ(edit({{"image", {{"data", std::string(17, 'A')}, {"mime_type", "image/png"}}}}),
            "'image.data' is 17 bytes; at most 16 are allowed");
  EXPECT_EQ(edit({{"reference_images", {{{"path", "a"}}, {{"path", "b"}, {"x", 1}}}}}),
            "unknown field 'reference_images[1].x'; allowed fields: data, mime_type, path");
  EXPECT_EQ(edit({{"reference_images", {{{"path", "a"}}, {{"path", "b"}}, {{"path", "c"}}}}}),
            "'reference_images' has 3 images; at most 2 are allowed");
  EXPECT_EQ(edit({{"reference_images", "a.png"}}),
            "'reference_images' must be an array of images, got string");
  EXPECT_EQ(edit({{"image", {{"path", "a"}}}, {"from_version", 2}}),
            "'image' and 'from_version' cannot be used together: 'image' edits an outside image, "
            "'from_version' an earlier version of the session");
}

// The generation parameters: their enums come from the backend's models (OfferModels), the
// per-model rules are checked later (imaging::CheckGenerationOptions).
TEST(ToolArgsTest, GenerationParametersFollowTheOfferedModels) {
  imaging::ModelCapabilities lite;
  lite.id = "lite";
  lite.image_sizes = {"1K"};
  lite.aspect_ratios = imaging::StandardAspectRatios();
  lite.thinking = imaging::Support::kYes;
  lite.thinking_levels = {"minimal", "high"};
  imaging::ModelCapabilities flash = lite;
  flash.id = "flash";
  flash.image_sizes = {"512", "1K", "2K"};
  flash.aspect_ratios = imaging::AspectRatioNames();
  flash.thinking_levels = {"minimal", "medium", "high"};
  ArgumentOptions o = Options();
  OfferModels({lite, flash}, o);
  o.model_note = [](const std::string& model) {
    return model == "old" ? "model old was retired on 2026-10-02; use lite instead" : "";
  };
  EXPECT_EQ(o.model_ids, (std::vector<std::string>{"lite", "flash"}));
  EXPECT_EQ(o.image_sizes, (std::vector<std::string>{"512", "1K", "2K"}));  // the union
  EXPECT_EQ(o.aspect_ratios, imaging::AspectRatioNames());
  EXPECT_NE(o.models_description.find("default lite"), std::string::npos);
  EXPECT_NE(o.models_description.find("\n- flash: image_size 512 1K 2K;"), std::string::npos)
      << o.models_description;

  auto args = ParseArguments<EditImageArgs>(Json{{"session_id", "s"},
                                                 {"prompt", "x"},
                                                 {"model", "flash"},
                                                 {"image_size", "2K"},
                                                 {"thinking", "high"},
                                                 {"search", true},
                                                 {"context", "chain"}},
                                            o);
  ASSERT_TRUE(args.ok()) << args.error().message;
  EXPECT_TRUE(args->chain());
  const imaging::GenerationOptions g = args->generation.Options();
  EXPECT_EQ(g.model, "flash");
  EXPECT_EQ(g.image_size, "2K");
  EXPECT_EQ(g.thinking, "high");
  EXPECT_TRUE(g.search);

  auto error = [&](Json extra) {
    Json json = {{"prompt", "x"}};
    json.update(extra);
    auto parsed = ParseArguments<GenerateImageArgs>(json, o);
    return parsed.ok() ? std::string() : parsed.error().message;
  };
  EXPECT_EQ(error({{"model", "pro"}}), "'model' is \"pro\"; allowed: \"lite\", \"flash\"");
  EXPECT_EQ(error({{"image_size", "4K"}}),
            "'image_size' is \"4K\"; allowed: \"512\", \"1K\", \"2K\"");
  EXPECT_EQ(error({{"model", "old"}}),
            "'model' is \"old\"; allowed: \"lite\", \"flash\". model old was retired on "
            "2026-10-02; use lite instead");
  EXPECT_EQ(error({{"thinking", "low"}}),
            "'thinking' is \"low\"; allowed: \"minimal\", \"medium\", \"high\"");
  EXPECT_EQ(error({{"search", "yes"}}), "'search' must be true or false, got string");
  EXPECT_EQ(ParseArguments<EditImageArgs>(
                Json{{"session_id", "s"}, {"prompt", "x"}, {"context", "story"}}, o)
                .error()
                .message,
            "'context' is \"story\"; allowed: \"image\", \"chain\"");

  const Json schema = ArgumentsSchema<GenerateImageArgs>(o);
  EXPECT_EQ(schema["properties"]["model"]["enum"], Json({"lite", "flash"}));
  EXPECT_EQ(schema["properties"]["image_size"]["enum"], Json({"512", "1K", "2K"}));
  EXPECT_EQ(schema["properties"]["thinking"]["enum"], Json({"minimal", "medium", "high"}));
  EXPECT_EQ(schema["properties"]["search"]["type"], "boolean");
  EXPECT_FALSE(schema.contains("required") && schema["required"].size() != 1);

  // No model takes a level: the enum keeps the whole vocabulary (never empty), and the check
  // names the model.
  lite.thinking = imaging::Support::kNo;
  lite.thinking_levels.clear();
  OfferModels({lite}, o);
  EXPECT_EQ(o.thinking_levels, imaging::ThinkingLevelNames());
}

TEST(ToolArgsTest, TheSchemaComesFromTheSameFields) {
  const Json schema = ArgumentsSchema<EditImageArgs>(Options());
  EXPECT_EQ(schema["type"], "object");
  EXPECT_EQ(schema["required"], Json({"session_id", "prompt"}));
  std::vector<std::string> names;
  for (const auto& [name, property] : schema["properties"].items()) names.push_back(name);
  EXPECT_EQ(names, (std::vector<std::string>{
                       "context", "estimate_only", "expected_version", "from_version",
                       "idempotency_key", "image", "image_size", "inline", "max_cost_usd", "model",
                       "overwrite", "prompt", "reference_images", "save_format", "save_quality",
                       "save_to", "search", "session_id", "thinking"}));
  EXPECT_EQ(schema["properties"]["inline"]["enum"], Json({"preview", "full", "none"}));
  EXPECT_EQ(schema["properties"]["expected_version"]["type"], "integer");
  const Json& image = schema["properties"]["image"];
  EXPECT_EQ(image["type"], "object");
  EXPECT_FALSE(image.contains("required"));
  EXPECT_EQ(image["properties"]["mime_type"]["enum"],
            Json({"image/png", "image/jpeg", "image/webp", "image/gif"}));
  const Json& refs = schema["properties"]["reference_images"];
  EXPECT_EQ(refs["type"], "array");
  EXPECT_EQ(refs["items"]["description"], "A reference image.");
  EXPECT_EQ(ArgumentsSchema<GetImageArgs>(Options())["properties"]["include_history"]["type"],
            "boolean");
  // Gemini's function-declaration subset: no composition keywords or references anywhere.
  for (const Json& s : {schema, ArgumentsSchema<GenerateImageArgs>(Options()),
                        ArgumentsSchema<GetImageArgs>(Options())}) {
    const std::string text = s.dump();
    for (const char* banned : {"oneOf", "anyOf", "allOf", "$ref"}) {
      EXPECT_EQ(text.find(banned), std::string::npos) << banned;
    }
  }
}

// --- idempotency_key -----------------------------------------------------------------------------

TEST(ToolArgsTest, IdempotencyKeysAreCheckedAtTheEdge) {
  auto generate = *ParseArguments<GenerateImageArgs>(
      {{"prompt", "x"}, {"idempotency_key", "call-1:a.b_C"}}, Options());
  EXPECT_EQ(generate.idempotency_key, "call-1:a.b_C");
  auto edit = *ParseArguments<EditImageArgs>(
      {{"session_id", "s"}, {"prompt", "x"}, {"idempotency_key", std::string(128, 'k')}},
      Options());
  EXPECT_EQ(edit.idempotency_key->size(), 128u);
  auto reset = *ParseArguments<ResetSessionArgs>(
      {{"session_id", "s"}, {"idempotency_key", "r1"}, {"to_version", 2}}, Options());
  EXPECT_EQ(reset.idempotency_key, "r1");
  const std::string allowed = "allowed: 1 to 128 characters from A-Z a-z 0-9 . _ : -";
  for (const std::string& bad : {std::string(""), std::string(129, 'k'), std::string("a b"),
                                 std::string("k/1"), std::string("é")}) {
    const std::string error =
        ErrorOf<ResetSessionArgs>({{"session_id", "s"}, {"idempotency_key", bad}});
    EXPECT_EQ(error.rfind("'idempotency_key' is \"", 0), 0u) << error;
    EXPECT_NE(error.find(allowed), std::string::npos) << error;
  }
  EXPECT_EQ(ErrorOf<GenerateImageArgs>({{"prompt", "x"}, {"idempotency_key", 7}}),
            "'idempotency_key' must be a string, got integer");
  // get_image changes nothing: it takes no key.
  EXPECT_NE(ErrorOf<GetImageArgs>({{"session_id", "s"}, {"idempotency_key", "k"}})
                .find("unknown field 'idempotency_key'"),
            std::string::npos);
  for (const Json& schema :
       {ArgumentsSchema<GenerateImageArgs>(Options()), ArgumentsSchema<EditImageArgs>(Options()),
        ArgumentsSchema<ResetSessionArgs>(Options())}) {
    const Json& key = schema["properties"]["idempotency_key"];
    EXPECT_EQ(key["type"], "string");
    EXPECT_NE(key["description"].get<std::string>().find("A-Z a-z 0-9 . _ : -"), std::string::npos);
    EXPECT_EQ(schema["required"].dump().find("idempotency_key"), std::string::npos);
  }
}

template <typename Args>
std::string DigestOfJson(const std::string& tool, const Json& json) {
  Result<Args> args = ParseArguments<Args>(json, Options());
  EXPECT_TRUE(args.ok()) << args.error().message;
  return args.ok() ? ArgumentsDigest(tool, *args, Options()) : "";
}

// A repeat is the same call when what it would commit is the same: the key itself and the
// presentational arguments do not count, everything else does.
TEST(ToolArgsTest, TheDigestIsTheCallsCanonicalArguments) {
  const Json base = {{"session_id", "s"},
                     {"prompt", "make it red"},
                     {"expected_version", 3},
                     {"reference_images", {{{"path", "/tmp/a.png"}}}},
                     {"idempotency_key", "k1"}};
  const std::string digest = DigestOfJson<EditImageArgs>("edit_image", base);
  EXPECT_EQ(digest.size(), 64u);
  auto with = [&](const char* field, Json value) {
    Json j = base;
    j[field] = std::move(value);
    return DigestOfJson<EditImageArgs>("edit_image", j);
  };
  // The same: another key, presentation, a copy, JSON spelling (3.0, null for absent).
  EXPECT_EQ(with("idempotency_key", "k2"), digest);
  EXPECT_EQ(with("inline", "none"), digest);
  EXPECT_EQ(with("save_to", "/tmp/out.png"), digest);
  EXPECT_EQ(with("expected_version", 3.0), digest);
  EXPECT_EQ(with("from_version", nullptr), digest);
  // Different: anything the commit depends on.
  EXPECT_NE(with("prompt", "make it blue"), digest);
  EXPECT_NE(with("expected_version", 4), digest);
  EXPECT_NE(with("context", "chain"), digest);
  EXPECT_NE(with("image_size", "2K"), digest);
  EXPECT_NE(with("reference_images", {{{"path", "/tmp/b.png"}}}), digest);
  // Long data counts by its digest: equal data the same, other data different.
  ArgumentOptions big = Options();
  big.max_image_data_chars = 1 << 20;
  auto with_data = [&](char fill) {
    Json j = base;
    j["image"] = {{"data", std::string(100000, fill)}, {"mime_type", "image/png"}};
    j.erase("reference_images");
    return ArgumentsDigest("edit_image", *ParseArguments<EditImageArgs>(j, big), big);
  };
  EXPECT_EQ(with_data('A'), with_data('A'));
  EXPECT_NE(with_data('A'), with_data('B'));
  Json other_tool = base;
  EXPECT_NE(DigestOfJson<EditImageArgs>("generate_image", other_tool), digest);
  // reset_session: clearing and reverting are different calls.
  EXPECT_NE(
      DigestOfJson<ResetSessionArgs>("reset_session", {{"session_id", "s"}}),
      DigestOfJson<ResetSessionArgs>("reset_session", {{"session_id", "s"}, {"to_version", 1}}));
}

// Without session_id, generate_image's key names its session, so a repeat finds it.
TEST(ToolArgsTest, AKeyedGenerateWithoutASessionIsNamedAfterItsKey) {
  GenerateImageArgs a;
  EXPECT_FALSE(a.SessionFor().has_value());
  a.idempotency_key = "k1";
  const std::optional<std::string> id = a.SessionFor();
  ASSERT_TRUE(id.has_value());
  EXPECT_TRUE(session::IsValidSessionId(*id)) << *id;
  EXPECT_EQ(id, a.SessionFor());
  GenerateImageArgs b;
  b.idempotency_key = "k2";
  EXPECT_NE(b.SessionFor(), id);
  a.session_id = "mine";
  EXPECT_EQ(a.SessionFor(), "mine");
}

}  // namespace
}  // namespace imgmcp::tools
