// Strict parsing of tool arguments into typed structs, and those structs' JSON Schemas, from one
// list of fields. Every failure names the field and what is allowed; unknown fields are errors,
// never silently ignored.
//
// A tool's argument struct lists its fields once, in a member template
//
//   template <typename V> void Fields(V& v) {
//     v.Prompt("prompt", prompt, "What the image should show.");
//     v.Enum("aspect_ratio", aspect_ratio, kAspectRatios, "Width:height of the image.");
//   }
//
// which ParseArguments<Args> runs with an ArgumentParser (reads and checks the JSON),
// ArgumentsSchema<Args> with a SchemaWriter (writes the inputSchema) and ArgumentsDigest<Args>
// with a DigestWriter (what an idempotency_key repeat is compared by). Rules across fields go in an
// optional `Status Check(const std::string& where) const`, run after the fields parsed. Adding an
// optional field is one line in Fields plus the member.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "common/json.h"
#include "common/json_reader.h"
#include "common/result.h"
#include "imaging/generation_params.h"

namespace imgmcp::tools {

// session_id: session::IsValidSessionId, refused with session::InvalidSessionIdError.
Status ValidateSessionId(const std::string& id, const std::string& field = "session_id");

// What shapes parsing (and schemas) at run time: the server's configured limits.
struct ArgumentOptions {
  size_t max_prompt_bytes = 100 * 1024;
  size_t max_image_data_chars = 64 << 20;  // base64 characters of one inline image
  size_t max_reference_images = 14;
  // What the backend's models offer (OfferModels in tool_args.h): the enums of model, image_size,
  // aspect_ratio and thinking, and the description that says which model takes what. By default
  // every size, ratio and level and no model list.
  std::vector<std::string> model_ids;
  std::vector<std::string> image_sizes = imaging::ImageSizeNames();
  std::vector<std::string> aspect_ratios = imaging::AspectRatioNames();
  std::vector<std::string> thinking_levels = imaging::ThinkingLevelNames();
  std::string models_description;
  // Said when a call names a model not offered (ImageBackend::ModelNote); null says nothing.
  RefusalNote model_note;
  // The store's retention (--max-versions, --idle-days), which tool descriptions state.
  int max_versions = 100;  // versions kept per session; 0 = all
  int idle_days = 0;       // sessions idle longer are deleted; 0 = never
  // Where save_to may write on this server (SaveTargets::DescribeRoots), said after its
  // description; empty says nothing.
  std::string save_roots_description;
};

// What a JSON null given for an optional field means: absent (the default), or an error where
// leaving the field out does something drastic (reset_session's to_version: null would clear).
enum class NullIs { kAbsent, kRefused };

// Longest session_id string read before its pattern is checked (the error shows up to 80 chars).
inline constexpr size_t kMaxSessionIdRead = 256;

// A string enum whose values map to E (e.g. "preview" → InlineMode::kPreview).
template <typename E>
using EnumChoices = std::vector<std::pair<std::string, E>>;

// Reads one JSON object into a struct through its Fields(). Stops at the first error; Finish()
// returns it, or names the first field that no Fields() entry asked for.
class ArgumentParser {
 public:
  // `where` prefixes error messages of nested objects, e.g. "image" or "reference_images[1]".
  ArgumentParser(const Json& object, const ArgumentOptions& options, std::string where = "");

  const ArgumentOptions& options() const { return options_; }

  void String(const char* name, std::string& out, size_t max_length,
              const std::string& description);
  void String(const char* name, std::optional<std::string>& out, size_t max_length,
              const std::string& description);
  // A required, non-blank string of at most options().max_prompt_bytes.
  void Prompt(const char* name, std::string& out, const std::string& description);
  // A session_id (see ValidateSessionId), required or optional.
  void SessionId(const char* name, std::string& out, const std::string& description);
  void SessionId(const char* name, std::optional<std::string>& out, const std::string& description);
  // An optional idempotency key (session::IsValidIdempotencyKey).
  void IdempotencyKey(const char* name, std::optional<std::string>& out,
                      const std::string& description);
  void Integer(const char* name, std::optional<int64_t>& out, int64_t min, int64_t max,
               const std::string& description, NullIs null = NullIs::kAbsent);
  void Bool(const char* name, std::optional<bool>& out, const std::string& description);
  // A number above `above` and at most `max` (an amount of money, say).
  void Number(const char* name, std::optional<double>& out, double above, double max,
              const std::string& description);
  // `refusal_note` follows the list of allowed values when a value is refused.
  void Enum(const char* name, std::optional<std::string>& out,
            const std::vector<std::string>& allowed, const std::string& description,
            const RefusalNote& refusal_note = nullptr);
  // Absent leaves `out` as it is (the struct's default).
  template <typename E>
  void Enum(const char* name, E& out, const EnumChoices<E>& choices,
            const std::string& description);
  // A nested object parsed by T::Fields (and T::Check, if it has one).
  template <typename T>
  void Object(const char* name, std::optional<T>& out, const std::string& description);
  // An array of at most `max_items` nested objects; `noun` names them in errors ("images").
  template <typename T>
  void Objects(const char* name, std::vector<T>& out, size_t max_items, const char* noun,
               const std::string& item_description, const std::string& description);

  // The first error, else kInvalidArgument naming an unknown field and the allowed ones.
  Status Finish() const;

 private:
  bool failed() const { return error_.has_value(); }
  void Fail(const Error& error) { error_ = error; }
  template <typename T>
  Result<T> ParseNested(const Json& value, const std::string& where);

  JsonObjectReader reader_;
  const ArgumentOptions& options_;
  std::string where_;
  std::optional<Error> error_;
};

// Writes the JSON Schema of a struct's Fields(): {"type":"object","properties":…,"required":…}.
// Schemas stay inside Gemini's function-declaration subset: plain objects, arrays, string enums;
// ranges and patterns are stated in descriptions and enforced by the parser.
class SchemaWriter {
 public:
  explicit SchemaWriter(const ArgumentOptions& options) : options_(options) {}

  const ArgumentOptions& options() const { return options_; }

  void String(const char* name, std::string&, size_t, const std::string& description);
  void String(const char* name, std::optional<std::string>&, size_t,
              const std::string& description);
  void Prompt(const char* name, std::string&, const std::string& description);
  void SessionId(const char* name, std::string&, const std::string& description);
  void SessionId(const char* name, std::optional<std::string>&, const std::string& description);
  void IdempotencyKey(const char* name, std::optional<std::string>&,
                      const std::string& description);
  void Integer(const char* name, std::optional<int64_t>&, int64_t, int64_t,
               const std::string& description, NullIs = NullIs::kAbsent);
  void Bool(const char* name, std::optional<bool>&, const std::string& description);
  void Number(const char* name, std::optional<double>&, double, double,
              const std::string& description);
  void Enum(const char* name, std::optional<std::string>&, const std::vector<std::string>& allowed,
            const std::string& description, const RefusalNote& refusal_note = nullptr);
  template <typename E>
  void Enum(const char* name, E&, const EnumChoices<E>& choices, const std::string& description) {
    std::vector<std::string> names;
    for (const auto& choice : choices) names.push_back(choice.first);
    Property(name, EnumSchema(names, description), false);
  }
  template <typename T>
  void Object(const char* name, std::optional<T>&, const std::string& description) {
    Property(name, SchemaOf<T>(description), false);
  }
  template <typename T>
  void Objects(const char* name, std::vector<T>&, size_t, const char*,
               const std::string& item_description, const std::string& description) {
    Json array = {{"type", "array"}, {"description", description}};
    array["items"] = SchemaOf<T>(item_description);
    Property(name, std::move(array), false);
  }

  // The object schema; `description` (when not empty) describes the object itself.
  Json Take(const std::string& description = "");

 private:
  static Json EnumSchema(const std::vector<std::string>& allowed, const std::string& description);
  void Property(const char* name, Json schema, bool required);
  template <typename T>
  Json SchemaOf(const std::string& description) const {
    T nested{};
    SchemaWriter writer(options_);
    nested.Fields(writer);
    return writer.Take(description);
  }

  const ArgumentOptions& options_;
  Json properties_ = Json::object();
  Json required_ = Json::array();
};

// Writes the parsed values of a struct's Fields() as one canonical JSON object (absent optional
// fields left out, objects key-sorted), without the fields that do not change what a call
// commits: idempotency_key itself, the presentational inline, save_to, save_format,
// save_quality and overwrite, and the cost checks max_cost_usd and estimate_only
// (docs/generation.md, "Exactly-once writes"). Two calls with the
// same canonical arguments are the same call.
class DigestWriter {
 public:
  explicit DigestWriter(const ArgumentOptions& options) : options_(options) {}

  const ArgumentOptions& options() const { return options_; }

  void String(const char* name, std::string& value, size_t, const std::string&) {
    Put(name, Text(value));
  }
  void String(const char* name, std::optional<std::string>& value, size_t, const std::string&) {
    if (value) Put(name, Text(*value));
  }
  void Prompt(const char* name, std::string& value, const std::string&) { Put(name, Text(value)); }
  void SessionId(const char* name, std::string& value, const std::string&) { Put(name, value); }
  void SessionId(const char* name, std::optional<std::string>& value, const std::string&) {
    if (value) Put(name, *value);
  }
  void IdempotencyKey(const char*, std::optional<std::string>&, const std::string&) {}
  void Integer(const char* name, std::optional<int64_t>& value, int64_t, int64_t,
               const std::string&, NullIs = NullIs::kAbsent) {
    if (value) Put(name, *value);
  }
  void Bool(const char* name, std::optional<bool>& value, const std::string&) {
    if (value) Put(name, *value);
  }
  void Number(const char* name, std::optional<double>& value, double, double, const std::string&) {
    if (value) Put(name, *value);
  }
  void Enum(const char* name, std::optional<std::string>& value, const std::vector<std::string>&,
            const std::string&, const RefusalNote& = nullptr) {
    if (value) Put(name, *value);
  }
  template <typename E>
  void Enum(const char* name, E& value, const EnumChoices<E>& choices, const std::string&) {
    for (const auto& choice : choices) {
      if (choice.second == value) Put(name, choice.first);
    }
  }
  template <typename T>
  void Object(const char* name, std::optional<T>& value, const std::string&) {
    if (value) Put(name, Nested(*value));
  }
  template <typename T>
  void Objects(const char* name, std::vector<T>& values, size_t, const char*, const std::string&,
               const std::string&) {
    if (values.empty()) return;
    Json array = Json::array();
    for (T& value : values) array.push_back(Nested(value));
    Put(name, std::move(array));
  }

  Json Take() { return std::move(object_); }

 private:
  // False for the fields a repeat may change (see the class comment).
  static bool Counts(const char* name);
  // A string as it counts: itself, or for a long one (an image's base64 data) its SHA-256, so a
  // digest never copies megabytes.
  static Json Text(const std::string& value);
  void Put(const char* name, Json value) {
    if (Counts(name)) object_[name] = std::move(value);
  }
  template <typename T>
  Json Nested(T& value) const {
    DigestWriter writer(options_);
    value.Fields(writer);
    return writer.Take();
  }

  const ArgumentOptions& options_;
  Json object_ = Json::object();
};

// Parses `arguments` into Args (its Fields, then its Check).
template <typename Args>
Result<Args> ParseArguments(const Json& arguments, const ArgumentOptions& options,
                            const std::string& where = "") {
  Args args{};
  ArgumentParser parser(arguments, options, where);
  args.Fields(parser);
  RETURN_IF_ERROR(parser.Finish());
  if constexpr (requires(const Args& a) { a.Check(where); }) {
    RETURN_IF_ERROR(args.Check(where));
  }
  return args;
}

// The inputSchema of Args.
template <typename Args>
Json ArgumentsSchema(const ArgumentOptions& options) {
  Args args{};
  SchemaWriter writer(options);
  args.Fields(writer);
  return writer.Take();
}

// The digest of `args` as tool `tool` takes them: the hex SHA-256 of the tool's name and the
// canonical JSON of the arguments (DigestWriter).
std::string DigestOf(const std::string& tool, const Json& canonical);
template <typename Args>
std::string ArgumentsDigest(const std::string& tool, const Args& args,
                            const ArgumentOptions& options) {
  DigestWriter writer(options);
  // Fields() takes its members by reference to fill them; the writer only reads them.
  const_cast<Args&>(args).Fields(writer);
  return DigestOf(tool, writer.Take());
}

template <typename E>
void ArgumentParser::Enum(const char* name, E& out, const EnumChoices<E>& choices,
                          const std::string& description) {
  std::vector<std::string> names;
  for (const auto& choice : choices) names.push_back(choice.first);
  std::optional<std::string> chosen;
  Enum(name, chosen, names, description);
  if (failed() || !chosen) return;
  for (const auto& choice : choices) {
    if (choice.first == *chosen) out = choice.second;
  }
}

template <typename T>
Result<T> ArgumentParser::ParseNested(const Json& value, const std::string& where) {
  return ParseArguments<T>(value, options_, where);
}

template <typename T>
void ArgumentParser::Object(const char* name, std::optional<T>& out, const std::string&) {
  if (failed()) return;
  const Json* value = reader_.OptionalValue(name);
  if (value == nullptr) return;
  auto parsed = ParseNested<T>(*value, reader_.FieldName(name));
  if (!parsed.ok()) return Fail(parsed.error());
  out = std::move(parsed).value();
}

template <typename T>
void ArgumentParser::Objects(const char* name, std::vector<T>& out, size_t max_items,
                             const char* noun, const std::string&, const std::string&) {
  if (failed()) return;
  const Json* value = reader_.OptionalValue(name);
  if (value == nullptr) return;
  const std::string field = reader_.FieldName(name);
  if (!value->is_array()) {
    return Fail(Error(ErrorCode::kInvalidArgument, "'" + field + "' must be an array of " + noun +
                                                       ", got " + JsonTypeName(*value)));
  }
  if (value->size() > max_items) {
    return Fail(Error(ErrorCode::kInvalidArgument,
                      "'" + field + "' has " + std::to_string(value->size()) + " " + noun +
                          "; at most " + std::to_string(max_items) + " are allowed"));
  }
  for (size_t i = 0; i < value->size(); ++i) {
    auto parsed = ParseNested<T>((*value)[i], field + "[" + std::to_string(i) + "]");
    if (!parsed.ok()) return Fail(parsed.error());
    out.push_back(std::move(parsed).value());
  }
}

}  // namespace imgmcp::tools
