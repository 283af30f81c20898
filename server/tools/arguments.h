// Strict parsing of tool arguments into typed values. Every failure names the field and what is
// allowed; unknown fields are errors, never silently ignored.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/json.h"
#include "common/result.h"

namespace imgmcp::tools {

// Reads one JSON object of arguments. Each accessor checks presence and type; Finish() reports
// fields that no accessor asked for.
class ArgumentReader {
 public:
  // `where` prefixes error messages for nested objects, e.g. "image" or "reference_images[1]".
  explicit ArgumentReader(const Json& object, std::string where = "");

  // False (with error()) when the value given to the constructor is not an object.
  bool ok() const { return !error_.has_value(); }
  const Error& error() const { return *error_; }

  Result<std::string> RequiredString(const std::string& field, size_t max_length);
  Result<std::optional<std::string>> OptionalString(const std::string& field, size_t max_length);
  Result<std::optional<int64_t>> OptionalInteger(const std::string& field, int64_t min,
                                                 int64_t max);
  Result<std::optional<bool>> OptionalBool(const std::string& field);
  // A string that must be one of `allowed`.
  Result<std::optional<std::string>> OptionalEnum(const std::string& field,
                                                  const std::vector<std::string>& allowed);
  // Raw access for nested objects/arrays; records the field as known.
  const Json* OptionalValue(const std::string& field);

  // kInvalidArgument naming the first unexpected field and the allowed ones.
  Status Finish() const;

  std::string FieldName(const std::string& field) const;

 private:
  const Json& object_;
  std::string where_;
  std::set<std::string> known_;
  std::optional<Error> error_;
};

// session_id: ^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$
bool IsValidSessionId(const std::string& id);
Status ValidateSessionId(const std::string& id, const std::string& field = "session_id");

std::string JsonTypeName(const Json& value);

}  // namespace imgmcp::tools
