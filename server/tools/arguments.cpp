#include "server/tools/arguments.h"

#include <string_view>

#include "common/sha256.h"
#include "session/data_dir.h"
#include "session/idempotency.h"
#include "session/version_rules.h"

namespace imgmcp::tools {
std::string JsonTypeName(const Json& value) {
  switch (value.type()) {
    case Json::value_t::null:
      return "null";
    case Json::value_t::boolean:
      return "boolean";
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned:
      return "integer";
    case Json::value_t::number_float:
      return "number";
    case Json::value_t::string:
      return "string";
    case Json::value_t::array:
      return "array";
    case Json::value_t::object:
      return "object";
    default:
      return "unsupported value";
  }
}

ArgumentReader::ArgumentReader(const Json& object, std::string where)
    : object_(object), where_(std::move(where)) {
  if (!object_.is_object()) {
    error_ = InvalidArgument((where_.empty() ? std::string("arguments") : where_) +
                             " must be an object, got " + JsonTypeName(object_));
  }
}

std::string ArgumentReader::FieldName(const std::string& field) const {
  return where_.empty() ? field : where_ + "." + field;
}

const Json* ArgumentReader::OptionalValue(const std::string& field) {
  known_.insert(field);
  if (!ok()) return nullptr;
  auto it = object_.find(field);
  if (it == object_.end() || it->is_null()) return nullptr;
  return &*it;
}

Result<std::string> ArgumentReader::RequiredString(const std::string& field, size_t max_length) {
  if (!ok()) return *error_;
  const Json* v = OptionalValue(field);
  if (v == nullptr) return InvalidArgument("missing required field '" + FieldName(field) + "'");
  ASSIGN_OR_RETURN(std::optional<std::string> s, OptionalString(field, max_length));
  return std::move(*s);
}

Result<std::optional<std::string>> ArgumentReader::OptionalString(const std::string& field,
                                                                  size_t max_length) {
  if (!ok()) return *error_;
  const Json* v = OptionalValue(field);
  if (v == nullptr) return std::optional<std::string>();
  if (!v->is_string()) {
    return InvalidArgument("'" + FieldName(field) + "' must be a string, got " + JsonTypeName(*v));
  }
  const auto& s = v->get_ref<const std::string&>();
  if (s.size() > max_length) {
    return InvalidArgument("'" + FieldName(field) + "' is " + std::to_string(s.size()) +
                           " bytes; at most " + std::to_string(max_length) + " are allowed");
  }
  // A NUL cannot be stored as text (PostgreSQL refuses it, C APIs cut at it): refused, never cut.
  if (const size_t nul = s.find('\0'); nul != std::string::npos) {
    return InvalidArgument("'" + FieldName(field) +
                           "' contains a NUL character (\\u0000) at byte " + std::to_string(nul) +
                           "; remove it");
  }
  return std::optional<std::string>(s);
}

bool ArgumentReader::IsNull(const std::string& field) const {
  if (!object_.is_object()) return false;
  auto it = object_.find(field);
  return it != object_.end() && it->is_null();
}

Result<std::optional<int64_t>> ArgumentReader::OptionalInteger(const std::string& field,
                                                               int64_t min, int64_t max) {
  if (!ok()) return *error_;
  const Json* v = OptionalValue(field);
  if (v == nullptr) return std::optional<int64_t>();
  const std::string range =
      " (allowed: an integer from " + std::to_string(min) + " to " + std::to_string(max) + ")";
  int64_t value = 0;
  if (v->is_number_integer()) {
    if (v->is_number_unsigned() && v->get<uint64_t>() > static_cast<uint64_t>(INT64_MAX)) {
      return InvalidArgument("'" + FieldName(field) + "' is out of range" + range);
    }
    value = v->get<int64_t>();
  } else if (v->is_number_float()) {
    const double d = v->get<double>();
    // Range first: converting a double outside int64 is undefined behaviour.
    if (!(d >= -9.2e18 && d <= 9.2e18)) {
      return InvalidArgument("'" + FieldName(field) + "' is out of range" + range);
    }
    // 3.0 is accepted as 3 (JSON has one number type); 3.5 is not an integer.
    if (d != static_cast<double>(static_cast<int64_t>(d))) {
      return InvalidArgument("'" + FieldName(field) + "' must be an integer" + range);
    }
    value = static_cast<int64_t>(d);
  } else {
    return InvalidArgument("'" + FieldName(field) + "' must be an integer, got " +
                           JsonTypeName(*v) + range);
  }
  if (value < min || value > max) {
    return InvalidArgument("'" + FieldName(field) + "' is " + std::to_string(value) +
                           ", out of range" + range);
  }
  return std::optional<int64_t>(value);
}

Result<std::optional<bool>> ArgumentReader::OptionalBool(const std::string& field) {
  if (!ok()) return *error_;
  const Json* v = OptionalValue(field);
  if (v == nullptr) return std::optional<bool>();
  if (!v->is_boolean()) {
    return InvalidArgument("'" + FieldName(field) + "' must be true or false, got " +
                           JsonTypeName(*v));
  }
  return std::optional<bool>(v->get<bool>());
}

Result<std::optional<std::string>> ArgumentReader::OptionalEnum(
    const std::string& field, const std::vector<std::string>& allowed, const RefusalNote& note) {
  auto s = OptionalString(field, 64);
  std::string list;
  for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + ("\"" + a + "\"");
  if (!s.ok()) return InvalidArgument(s.error().message + " (allowed: " + list + ")");
  if (!s->has_value()) return s;
  for (const auto& a : allowed) {
    if (**s == a) return s;
  }
  const std::string said = note ? note(**s) : std::string();
  return InvalidArgument("'" + FieldName(field) + "' is \"" + **s + "\"; allowed: " + list +
                         (said.empty() ? "" : ". " + said));
}

Status ArgumentReader::Finish() const {
  if (!ok()) return *error_;
  for (const auto& [key, value] : object_.items()) {
    if (known_.count(key) == 0) {
      std::string list;
      for (const auto& k : known_) list += (list.empty() ? "" : ", ") + k;
      std::string shown = key.size() > 64 ? key.substr(0, 64) + "…" : key;
      return InvalidArgument("unknown field '" + FieldName(shown) + "'; allowed fields: " + list);
    }
  }
  return Status::Ok();
}

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
      "idempotency_key", "inline", "save_to", "save_format", "save_quality", "overwrite"};
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
