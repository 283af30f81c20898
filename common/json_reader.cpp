#include "common/json_reader.h"

#include <cstdint>
#include <sstream>
#include <utility>

namespace imgmcp {
namespace {

// Scans JSON text from `at`: each step moves past one token and says whether the text allowed it.
class JsonScan {
 public:
  explicit JsonScan(std::string_view text) : text_(text) {}

  size_t at() const { return at_; }
  void SkipSpace() {
    while (at_ < text_.size() &&
           (text_[at_] == ' ' || text_[at_] == '\n' || text_[at_] == '\r' || text_[at_] == '\t')) {
      ++at_;
    }
  }
  bool Take(char c) {
    SkipSpace();
    if (at_ >= text_.size() || text_[at_] != c) return false;
    ++at_;
    return true;
  }
  // A string (at its opening quote): its text between the quotes, escapes as written.
  std::optional<std::string_view> String() {
    if (!Take('"')) return std::nullopt;
    const size_t start = at_;
    while (at_ < text_.size() && text_[at_] != '"') at_ += text_[at_] == '\\' ? 2 : 1;
    if (at_ >= text_.size()) return std::nullopt;
    return text_.substr(start, at_++ - start);
  }
  // Any value, nested ones whole: objects and arrays by their brackets (strings inside skipped),
  // scalars up to the next delimiter.
  bool SkipValue() {
    SkipSpace();
    if (at_ >= text_.size()) return false;
    if (text_[at_] == '"') return String().has_value();
    if (text_[at_] != '{' && text_[at_] != '[') {
      const size_t start = at_;
      while (at_ < text_.size() &&
             std::string_view(",}] \n\r\t").find(text_[at_]) == std::string_view::npos) {
        ++at_;
      }
      return at_ > start;
    }
    int depth = 0;
    while (at_ < text_.size()) {
      const char c = text_[at_];
      if (c == '"') {
        if (!String()) return false;
        continue;
      }
      ++at_;
      if (c == '{' || c == '[') ++depth;
      if ((c == '}' || c == ']') && --depth == 0) return true;
    }
    return false;
  }

 private:
  std::string_view text_;
  size_t at_ = 0;
};

}  // namespace

std::optional<std::string_view> MemberText(std::string_view object_text, std::string_view key) {
  JsonScan scan(object_text);
  if (!scan.Take('{')) return std::nullopt;
  if (scan.Take('}')) return std::nullopt;
  do {
    const std::optional<std::string_view> name = scan.String();
    if (!name || !scan.Take(':')) return std::nullopt;
    scan.SkipSpace();
    const size_t start = scan.at();
    if (!scan.SkipValue()) return std::nullopt;
    if (*name == key) return object_text.substr(start, scan.at() - start);
  } while (scan.Take(','));
  return std::nullopt;
}

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

JsonObjectReader::JsonObjectReader(const Json& object, std::string where)
    : object_(object), where_(std::move(where)) {
  if (!object_.is_object()) {
    error_ = InvalidArgument((where_.empty() ? std::string("arguments") : where_) +
                             " must be an object, got " + JsonTypeName(object_));
  }
}

std::string JsonObjectReader::FieldName(const std::string& field) const {
  return where_.empty() ? field : where_ + "." + field;
}

const Json* JsonObjectReader::OptionalValue(const std::string& field) {
  known_.insert(field);
  if (!ok()) return nullptr;
  auto it = object_.find(field);
  if (it == object_.end() || it->is_null()) return nullptr;
  return &*it;
}

Result<std::string> JsonObjectReader::RequiredString(const std::string& field, size_t max_length) {
  if (!ok()) return *error_;
  const Json* v = OptionalValue(field);
  if (v == nullptr) return InvalidArgument("missing required field '" + FieldName(field) + "'");
  ASSIGN_OR_RETURN(std::optional<std::string> s, OptionalString(field, max_length));
  return std::move(*s);
}

Result<std::optional<std::string>> JsonObjectReader::OptionalString(const std::string& field,
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

bool JsonObjectReader::IsNull(const std::string& field) const {
  if (!object_.is_object()) return false;
  auto it = object_.find(field);
  return it != object_.end() && it->is_null();
}

Result<std::optional<int64_t>> JsonObjectReader::OptionalInteger(const std::string& field,
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

Result<std::optional<bool>> JsonObjectReader::OptionalBool(const std::string& field) {
  if (!ok()) return *error_;
  const Json* v = OptionalValue(field);
  if (v == nullptr) return std::optional<bool>();
  if (!v->is_boolean()) {
    return InvalidArgument("'" + FieldName(field) + "' must be true or false, got " +
                           JsonTypeName(*v));
  }
  return std::optional<bool>(v->get<bool>());
}

Result<std::optional<double>> JsonObjectReader::OptionalNumber(const std::string& field,
                                                               double above, double max) {
  if (!ok()) return *error_;
  const Json* v = OptionalValue(field);
  if (v == nullptr) return std::optional<double>();
  const auto range = [&] {
    std::ostringstream out;
    out << "a number above " << above << " and at most " << max;
    return out.str();
  };
  if (!v->is_number()) {
    return InvalidArgument("'" + FieldName(field) + "' must be " + range() + ", got " +
                           JsonTypeName(*v));
  }
  const double x = v->get<double>();
  if (!(x > above && x <= max)) {
    std::ostringstream got;
    got << x;
    return InvalidArgument("'" + FieldName(field) + "' must be " + range() + ", got " + got.str());
  }
  return std::optional<double>(x);
}

Result<std::optional<std::string>> JsonObjectReader::OptionalEnum(
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

Status JsonObjectReader::Finish() const {
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

}  // namespace imgmcp
