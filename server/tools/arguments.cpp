#include "server/tools/arguments.h"

#include <string_view>

#include "common/sha256.h"
#include "session/data_dir.h"
#include "session/idempotency.h"
#include "session/version_rules.h"

namespace imgmcp::tools {

// --- ArgumentParser ----------------------------------------------------------------------------

ArgumentParser::ArgumentParser(const Json& object, const ArgumentOptions& options,
                               std::string where)
    : reader_(object, where), options_(options), where_(std::move(where)) {
  if (!reader_.ok()) error_ = reader_.error();
}

void ArgumentParser::String(const char* name, std::string& out, size_t max_length,
                            const std::string&) {
  if (failed()) return;
  auto value = reader_.RequiredString(name, max_length);
  if (!value.ok()) return Fail(value.error());
  out = std::move(value).value();
}

void ArgumentParser::String(const char* name, std::optional<std::string>& out, size_t max_length,
                            const std::string&) {
  if (failed()) return;
  auto value = reader_.OptionalString(name, max_length);
  if (!value.ok()) return Fail(value.error());
  out = std::move(value).value();
}

void ArgumentParser::Prompt(const char* name, std::string& out, const std::string& description) {
  String(name, out, options_.max_prompt_bytes, description);
  if (failed()) return;
  if (out.find_first_not_of(" \t\r\n") == std::string::npos) {
    Fail(InvalidArgument("'" + reader_.FieldName(name) + "' is empty"));
  }
}

void ArgumentParser::SessionId(const char* name, std::string& out, const std::string& description) {
  String(name, out, kMaxSessionIdRead, description);
  if (failed()) return;
  if (Status s = ValidateSessionId(out, reader_.FieldName(name)); !s.ok()) Fail(s.error());
}

void ArgumentParser::SessionId(const char* name, std::optional<std::string>& out,
                               const std::string& description) {
  String(name, out, kMaxSessionIdRead, description);
  if (failed() || !out) return;
  if (Status s = ValidateSessionId(*out, reader_.FieldName(name)); !s.ok()) Fail(s.error());
}

void ArgumentParser::IdempotencyKey(const char* name, std::optional<std::string>& out,
                                    const std::string& description) {
  // Read longer than allowed, so a long key gets the message that says what a key may be.
  String(name, out, 4096, description);
  if (failed() || !out) return;
  if (!session::IsValidIdempotencyKey(*out)) {
    Fail(session::InvalidIdempotencyKeyError(*out, reader_.FieldName(name)));
  }
}

void ArgumentParser::Integer(const char* name, std::optional<int64_t>& out, int64_t min,
                             int64_t max, const std::string&, NullIs null) {
  if (failed()) return;
  if (null == NullIs::kRefused && reader_.IsNull(name)) {
    return Fail(Error(ErrorCode::kInvalidArgument,
                      "'" + reader_.FieldName(name) + "' is null; give an integer from " +
                          std::to_string(min) + " to " + std::to_string(max) +
                          ", or leave the field out"));
  }
  auto value = reader_.OptionalInteger(name, min, max);
  if (!value.ok()) return Fail(value.error());
  out = *value;
}

void ArgumentParser::Bool(const char* name, std::optional<bool>& out, const std::string&) {
  if (failed()) return;
  auto value = reader_.OptionalBool(name);
  if (!value.ok()) return Fail(value.error());
  out = *value;
}

void ArgumentParser::Number(const char* name, std::optional<double>& out, double above, double max,
                            const std::string&) {
  if (failed()) return;
  auto value = reader_.OptionalNumber(name, above, max);
  if (!value.ok()) return Fail(value.error());
  out = *value;
}

void ArgumentParser::Enum(const char* name, std::optional<std::string>& out,
                          const std::vector<std::string>& allowed, const std::string&,
                          const RefusalNote& refusal_note) {
  if (failed()) return;
  auto value = reader_.OptionalEnum(name, allowed, refusal_note);
  if (!value.ok()) return Fail(value.error());
  out = std::move(value).value();
}

Status ArgumentParser::Finish() const {
  if (error_) return *error_;
  return reader_.Finish();
}

// --- SchemaWriter ------------------------------------------------------------------------------

void SchemaWriter::Property(const char* name, Json schema, bool required) {
  properties_[name] = std::move(schema);
  if (required) required_.push_back(name);
}

Json SchemaWriter::EnumSchema(const std::vector<std::string>& allowed,
                              const std::string& description) {
  return {{"type", "string"}, {"enum", allowed}, {"description", description}};
}

void SchemaWriter::String(const char* name, std::string&, size_t, const std::string& description) {
  Property(name, {{"type", "string"}, {"description", description}}, true);
}

void SchemaWriter::String(const char* name, std::optional<std::string>&, size_t,
                          const std::string& description) {
  Property(name, {{"type", "string"}, {"description", description}}, false);
}

void SchemaWriter::Prompt(const char* name, std::string&, const std::string& description) {
  Property(name, {{"type", "string"}, {"description", description}}, true);
}

void SchemaWriter::SessionId(const char* name, std::string&, const std::string& description) {
  Property(name, {{"type", "string"}, {"description", description}}, true);
}

void SchemaWriter::SessionId(const char* name, std::optional<std::string>&,
                             const std::string& description) {
  Property(name, {{"type", "string"}, {"description", description}}, false);
}

void SchemaWriter::IdempotencyKey(const char* name, std::optional<std::string>&,
                                  const std::string& description) {
  Property(name, {{"type", "string"}, {"description", description}}, false);
}

void SchemaWriter::Integer(const char* name, std::optional<int64_t>&, int64_t, int64_t,
                           const std::string& description, NullIs) {
  Property(name, {{"type", "integer"}, {"description", description}}, false);
}

void SchemaWriter::Bool(const char* name, std::optional<bool>&, const std::string& description) {
  Property(name, {{"type", "boolean"}, {"description", description}}, false);
}

void SchemaWriter::Number(const char* name, std::optional<double>&, double, double,
                          const std::string& description) {
  Property(name, {{"type", "number"}, {"description", description}}, false);
}

void SchemaWriter::Enum(const char* name, std::optional<std::string>&,
                        const std::vector<std::string>& allowed, const std::string& description,
                        const RefusalNote&) {
  Property(name, EnumSchema(allowed, description), false);
}

Json SchemaWriter::Take(const std::string& description) {
  Json schema = {{"type", "object"}};
  if (!description.empty()) schema["description"] = description;
  schema["properties"] = std::move(properties_);
  if (!required_.empty()) schema["required"] = std::move(required_);
  properties_ = Json::object();
  required_ = Json::array();
  return schema;
}

// --- DigestWriter ------------------------------------------------------------------------------

bool DigestWriter::Counts(const char* name) {
  static const std::set<std::string_view> kPresentational = {
      "idempotency_key", "inline",    "save_to",      "save_format",
      "save_quality",    "overwrite", "max_cost_usd", "estimate_only"};
  return kPresentational.count(name) == 0;
}

Json DigestWriter::Text(const std::string& value) {
  constexpr size_t kLongText = 4096;
  if (value.size() <= kLongText) return value;
  return "sha256:" + Sha256Hex(value);
}

std::string DigestOf(const std::string& tool, const Json& canonical) {
  return Sha256Hex(tool + "\n" + canonical.dump(-1, ' ', false, Json::error_handler_t::replace));
}

Status ValidateSessionId(const std::string& id, const std::string& field) {
  if (session::IsValidSessionId(id)) return Status::Ok();
  return session::InvalidSessionIdError(id, field);
}

}  // namespace imgmcp::tools
