// JsonObjectReader: the one way imgmcp reads the fields of a JSON object it was sent — tool
// arguments (server/tools/arguments.h) and the protocol core's request params (mcp/protocol.cpp,
// which looks members up with OptionalValue and words its errors the JSON-RPC way). Each accessor
// checks presence and type and says what is wrong naming the field ("'image.data' must be a
// string, got integer"); null reads as absent; Finish() reports fields no accessor asked for,
// for callers whose objects may not carry unknown fields.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "common/json.h"
#include "common/result.h"

namespace imgmcp {

// "null", "boolean", "integer", "number", "string", "array" or "object": a value's JSON type as
// errors name it.
std::string JsonTypeName(const Json& value);

// What a refusal of the enum value `value` says after the allowed values; "" for nothing.
using RefusalNote = std::function<std::string(const std::string& value)>;

// The text of the member `key` of the JSON object written in `object_text`, found by scanning it
// without building anything: nullopt when the text is not an object (as far as the scan reads it)
// or has no such member at its top level. Keys are compared as written (an escaped key never
// matches). The member's text is not checked: parse it. For reading one small member of a large
// stored document (a version's details) on every call.
std::optional<std::string_view> MemberText(std::string_view object_text, std::string_view key);

class JsonObjectReader {
 public:
  // `where` prefixes error messages for nested objects, e.g. "image" or "reference_images[1]";
  // without it the object itself is called "arguments".
  explicit JsonObjectReader(const Json& object, std::string where = "");

  // False (with error()) when the value given to the constructor is not an object.
  bool ok() const { return !error_.has_value(); }
  const Error& error() const { return *error_; }

  Result<std::string> RequiredString(const std::string& field, size_t max_length);
  // A string of at most `max_length` bytes, without NUL characters (refused, never cut).
  Result<std::optional<std::string>> OptionalString(const std::string& field, size_t max_length);
  // An integer from `min` to `max`; a whole float (3.0) counts as one.
  Result<std::optional<int64_t>> OptionalInteger(const std::string& field, int64_t min,
                                                 int64_t max);
  Result<std::optional<bool>> OptionalBool(const std::string& field);
  // A finite number (integer or not) above `above` and at most `max`.
  Result<std::optional<double>> OptionalNumber(const std::string& field, double above, double max);
  // A string that must be one of `allowed`.
  // A value outside `allowed` is refused naming them, then `note`'s text for it (when not empty).
  Result<std::optional<std::string>> OptionalEnum(const std::string& field,
                                                  const std::vector<std::string>& allowed,
                                                  const RefusalNote& note = nullptr);
  // Raw access for nested objects/arrays; records the field as known.
  const Json* OptionalValue(const std::string& field);
  // True when the field is present with the value null (which the accessors read as absent).
  bool IsNull(const std::string& field) const;

  // kInvalidArgument naming the first unexpected field and the allowed ones.
  Status Finish() const;

  // `field` as errors name it: "where.field", or "field" at the top.
  std::string FieldName(const std::string& field) const;

 private:
  const Json& object_;
  std::string where_;
  std::set<std::string> known_;
  std::optional<Error> error_;
};

}  // namespace imgmcp
