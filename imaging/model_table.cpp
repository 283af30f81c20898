#include "imaging/model_table.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <set>

#include "common/ascii.h"
#include "common/decimal.h"
#include "common/json.h"

namespace imgmcp::imaging {
namespace {

// Every key a row may have, in the order the format lists them.
constexpr std::string_view kRowKeys[] = {"id",
                                         "status",
                                         "retired_on",
                                         "replacement",
                                         "sizes",
                                         "aspect_ratios",
                                         "max_reference_images",
                                         "thinking",
                                         "search",
                                         "input_token_limit",
                                         "output_image_tokens",
                                         "prices_usd_per_million_tokens",
                                         "usd_per_grounded_query",
                                         "batch_price_factor"};
// The keys a new row may leave out (retired_on and replacement are required when its status is
// "retired"; without batch_price_factor the model takes no batch delivery).
constexpr std::string_view kOptionalKeys[] = {"retired_on", "replacement", "batch_price_factor"};
constexpr std::string_view kPriceKeys[] = {"input_text", "input_image", "output_text",
                                           "output_image", "thoughts"};
constexpr std::pair<std::string_view, ModelStatus> kStatuses[] = {
    {"ga", ModelStatus::kGa},
    {"preview", ModelStatus::kPreview},
    {"retired", ModelStatus::kRetired}};

constexpr int64_t kMostTokens = 100'000'000;  // input_token_limit
constexpr int64_t kMostImageTokens = 1'000'000;
constexpr double kMostUsd = 1'000'000;  // per million tokens, or per grounded query

template <typename List>
std::string Listed(const List& items) {
  std::string out;
  for (const auto& item : items) out += (out.empty() ? "" : ", ") + std::string(item);
  return out;
}

bool HasWord(const std::vector<std::string>& list, std::string_view value) {
  return std::find(list.begin(), list.end(), value) != list.end();
}

std::string TypeOf(const Json& v) {
  if (v.is_string()) return "a string";
  if (v.is_boolean()) return "true/false";
  if (v.is_number()) return "a number";
  if (v.is_array()) return "an array";
  if (v.is_object()) return "an object";
  return "null";
}

std::string Shown(const Json& v) {
  std::string text = v.dump();
  return text.size() > 60 ? text.substr(0, 60) + "…" : text;
}

// A failure of one key: the caller adds the document, row and key.
Error Bad(std::string what) { return InvalidArgument(std::move(what)); }

bool IsModelId(std::string_view id) {
  if (id.empty() || id.size() > 128 || id.find("..") != std::string_view::npos) return false;
  return std::all_of(id.begin(), id.end(),
                     [](char c) { return IsAsciiAlnum(c) || c == '.' || c == '_' || c == '-'; });
}

// YYYY-MM-DD naming a day of the Gregorian calendar.
bool IsDate(std::string_view s) {
  if (s.size() != 10 || s[4] != '-' || s[7] != '-') return false;
  const std::optional<int> year = ParseDecimal<int>(s.substr(0, 4), 1970, 9999);
  const std::optional<int> month = ParseDecimal<int>(s.substr(5, 2), 1, 12);
  const std::optional<int> day = ParseDecimal<int>(s.substr(8, 2), 1, 31);
  if (!year || !month || !day) return false;
  constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  const bool leap = (*year % 4 == 0 && *year % 100 != 0) || *year % 400 == 0;
  return *day <= kDays[*month - 1] + (*month == 2 && leap ? 1 : 0);
}

Result<std::string> ReadString(const Json& v) {
  if (!v.is_string()) return Bad("must be a string, got " + TypeOf(v));
  return v.get<std::string>();
}

Result<int64_t> ReadInteger(const Json& v, int64_t min, int64_t max) {
  if (!v.is_number_integer() || v.get<int64_t>() < min || v.get<int64_t>() > max) {
    return Bad("must be a whole number from " + std::to_string(min) + " to " + std::to_string(max) +
               ", got " + Shown(v));
  }
  return v.get<int64_t>();
}

Result<double> ReadUsd(const Json& v) {
  if (!v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() < 0 ||
      v.get<double>() > kMostUsd) {
    return Bad("must be a number of US dollars from 0 to 1000000, got " + Shown(v));
  }
  return v.get<double>();
}

// What ReadSubset reads: e.g. {"a size", "size", "sizes"}.
struct SubsetNames {
  std::string_view one;     // "a size"
  std::string_view noun;    // "size"
  std::string_view plural;  // "sizes"
};

// An array of distinct words of `vocabulary`, returned in the vocabulary's order; empty only when
// `may_be_empty`.
Result<std::vector<std::string>> ReadSubset(const Json& v,
                                            const std::vector<std::string>& vocabulary,
                                            const SubsetNames& what, bool may_be_empty) {
  if (!v.is_array()) return Bad("must be an array of strings, got " + TypeOf(v));
  if (v.empty() && !may_be_empty) return Bad("must list at least one " + std::string(what.noun));
  std::set<std::string> seen;
  for (const Json& item : v) {
    if (!item.is_string()) return Bad("must be an array of strings; it holds " + TypeOf(item));
    const std::string& word = item.get_ref<const std::string&>();
    if (!HasWord(vocabulary, word)) {
      return Bad(Shown(item) + " is not " + std::string(what.one) + "; the " +
                 std::string(what.plural) + " are " + Listed(vocabulary));
    }
    if (!seen.insert(word).second) return Bad(Shown(item) + " is listed twice");
  }
  std::vector<std::string> out;
  for (const std::string& word : vocabulary) {
    if (seen.count(word) != 0) out.push_back(word);
  }
  return out;
}

Result<std::map<std::string, int, std::less<>>> ReadImageTokens(const Json& v) {
  if (!v.is_object()) {
    return Bad("must be an object of tokens per size, e.g. {\"1K\": 1120}, got " + TypeOf(v));
  }
  std::map<std::string, int, std::less<>> out;
  for (const auto& [size, tokens] : v.items()) {
    if (!HasWord(ImageSizeNames(), size)) {
      return Bad("\"" + size + "\" is not a size; the sizes are " + Listed(ImageSizeNames()));
    }
    auto n = ReadInteger(tokens, 1, kMostImageTokens);
    if (!n.ok()) return Bad("\"" + size + "\" " + n.error().message);
    out[size] = static_cast<int>(*n);
  }
  return out;
}

Result<TokenPrices> ReadPrices(const Json& v) {
  if (!v.is_object()) {
    return Bad("must be an object with " + Listed(kPriceKeys) + ", got " + TypeOf(v));
  }
  TokenPrices p;
  double* fields[] = {&p.input_text, &p.input_image, &p.output_text, &p.output_image, &p.thoughts};
  for (size_t i = 0; i < std::size(kPriceKeys); ++i) {
    const auto it = v.find(std::string(kPriceKeys[i]));
    if (it == v.end()) return Bad("lacks \"" + std::string(kPriceKeys[i]) + "\"");
    auto usd = ReadUsd(*it);
    if (!usd.ok()) return Bad("\"" + std::string(kPriceKeys[i]) + "\" " + usd.error().message);
    *fields[i] = *usd;
  }
  for (const auto& [key, value] : v.items()) {
    if (std::find(std::begin(kPriceKeys), std::end(kPriceKeys), key) == std::end(kPriceKeys)) {
      return Bad("unknown price \"" + key + "\"; the prices are " + Listed(kPriceKeys));
    }
  }
  return p;
}

Status ReadStatus(ModelCapabilities& row, const Json& v) {
  ASSIGN_OR_RETURN(std::string name, ReadString(v));
  for (const auto& [word, status] : kStatuses) {
    if (name == word) {
      row.status = status;
      return Status::Ok();
    }
  }
  return Bad("\"" + name + "\" is not a status; the statuses are ga, preview and retired");
}

// Sets the field of `key` in `row` from `v`, checked on its own (FinishRow checks the keys
// together). `key` is one of kRowKeys other than "id".
Status ApplyKey(ModelCapabilities& row, std::string_view key, const Json& v) {
  if (key == "status") return ReadStatus(row, v);
  if (key == "retired_on") {
    ASSIGN_OR_RETURN(row.retired_on, ReadString(v));
    if (!IsDate(row.retired_on)) return Bad("\"" + row.retired_on + "\" is not a YYYY-MM-DD date");
  } else if (key == "replacement") {
    ASSIGN_OR_RETURN(row.replacement, ReadString(v));
    if (!IsModelId(row.replacement)) return Bad("\"" + row.replacement + "\" is not a model id");
  } else if (key == "sizes") {
    ASSIGN_OR_RETURN(row.image_sizes,
                     ReadSubset(v, ImageSizeNames(), {"a size", "size", "sizes"}, false));
  } else if (key == "aspect_ratios") {
    ASSIGN_OR_RETURN(row.aspect_ratios,
                     ReadSubset(v, AspectRatioNames(),
                                {"an aspect ratio", "aspect ratio", "aspect ratios"}, false));
  } else if (key == "thinking") {
    ASSIGN_OR_RETURN(row.thinking_levels,
                     ReadSubset(v, ThinkingLevelNames(),
                                {"a thinking level", "thinking level", "thinking levels"}, true));
  } else if (key == "max_reference_images") {
    ASSIGN_OR_RETURN(int64_t n, ReadInteger(v, 1, kMostInputImages));
    row.max_input_images = static_cast<int>(n);
  } else if (key == "input_token_limit") {
    ASSIGN_OR_RETURN(row.input_token_limit, ReadInteger(v, 1, kMostTokens));
  } else if (key == "search") {
    if (!v.is_boolean()) return Bad("must be true or false, got " + TypeOf(v));
    row.search = v.get<bool>() ? Support::kYes : Support::kNo;
  } else if (key == "output_image_tokens") {
    ASSIGN_OR_RETURN(row.output_image_tokens, ReadImageTokens(v));
  } else if (key == "prices_usd_per_million_tokens") {
    ASSIGN_OR_RETURN(row.prices, ReadPrices(v));
  } else if (key == "usd_per_grounded_query") {
    ASSIGN_OR_RETURN(row.usd_per_grounded_query, ReadUsd(v));
  } else if (key == "batch_price_factor") {
    if (!v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() <= 0 ||
        v.get<double>() > 1) {
      return Bad("must be a number above 0 and at most 1 (0.5: a batch token costs half), got " +
                 Shown(v));
    }
    row.batch_price_factor = v.get<double>();
  }
  return Status::Ok();
}

Error KeyError(const std::string& where, std::string_view key, const std::string& what) {
  return InvalidArgument(where + ": key \"" + std::string(key) + "\": " + what);
}

// The keys of `row` together, once every key is set; fills in what follows from them.
Status FinishRow(ModelCapabilities& row, const std::string& where) {
  for (const std::string& size : row.image_sizes) {
    if (row.output_image_tokens.count(size) == 0) {
      return KeyError(where, "output_image_tokens",
                      "has no entry for size " + size + " (the row's sizes are " +
                          Listed(row.image_sizes) + ")");
    }
  }
  for (const auto& [size, tokens] : row.output_image_tokens) {
    if (!HasWord(row.image_sizes, size)) {
      return KeyError(where, "output_image_tokens",
                      "has an entry for size " + size + ", which is not among the row's sizes (" +
                          Listed(row.image_sizes) + ")");
    }
  }
  if (row.status == ModelStatus::kRetired && row.retired_on.empty()) {
    return KeyError(where, "retired_on", "missing; a retired model needs the date it retired");
  }
  if (row.status == ModelStatus::kRetired && row.replacement.empty()) {
    return KeyError(where, "replacement",
                    "missing; a retired model needs the model to use instead");
  }
  if (row.replacement == row.id) {
    return KeyError(where, "replacement", "a model cannot replace itself");
  }
  row.thinking = row.thinking_levels.empty() ? Support::kNo : Support::kYes;
  row.chain = Support::kYes;   // every model takes a chat history; 3.x ones need their signatures
  row.input_image_tokens = 0;  // an input image is bounded by the most an output image costs
  for (const auto& [size, tokens] : row.output_image_tokens) {
    row.input_image_tokens = std::max(row.input_image_tokens, tokens);
  }
  row.listed = true;
  return Status::Ok();
}

// Every replacement names a row, and following them from a retired row reaches one that is not.
Status CheckReplacements(const std::vector<ModelCapabilities>& table,
                         const std::vector<std::string>& where) {
  for (size_t i = 0; i < table.size(); ++i) {
    const ModelCapabilities* row = &table[i];
    std::string path = row->id;
    for (size_t steps = 0; !row->replacement.empty(); ++steps) {
      const ModelCapabilities* next = FindModel(table, row->replacement);
      if (next == nullptr) {
        return KeyError(where[i], "replacement",
                        "no row has the id \"" + row->replacement + "\"" +
                            (row == &table[i] ? "" : " (reached through " + path + ")"));
      }
      path += " → " + next->id;
      if (next->status != ModelStatus::kRetired) break;
      if (steps > table.size()) {
        return KeyError(where[i], "replacement", "the replacements go round in a circle: " + path);
      }
      row = next;
    }
  }
  return Status::Ok();
}

Result<Json> ReadDocument(std::string_view document, std::string_view source) {
  Json doc;
  try {  // nlohmann/json reports where a syntax error is only through its exception
    doc = Json::parse(document);
  } catch (const Json::parse_error& e) {
    std::string what = e.what();
    if (const size_t end = what.find("] "); end != std::string::npos) what.erase(0, end + 2);
    return InvalidArgument(std::string(source) + ": not valid JSON: " + what);
  }
  if (!doc.is_object() || !doc.contains("models") || !doc["models"].is_array()) {
    return InvalidArgument(std::string(source) +
                           ": the document must be an object {\"models\": [row, …]}");
  }
  for (const auto& [key, value] : doc.items()) {
    if (key != "models") {
      return InvalidArgument(std::string(source) + ": unknown key \"" + key +
                             "\" at the top; the document holds only \"models\"");
    }
  }
  return doc;
}

// The id of row `index` of the document, checked; `where` grows from "<source>: models[i]" to
// name it.
Result<std::string> RowId(const Json& row, std::string& where) {
  if (!row.is_object())
    return InvalidArgument(where + ": a row must be an object, got " + TypeOf(row));
  const auto it = row.find("id");
  if (it == row.end()) return KeyError(where, "id", "missing; every row names its model");
  auto id = ReadString(*it);
  if (!id.ok()) return KeyError(where, "id", id.error().message);
  if (!IsModelId(*id)) {
    return KeyError(where, "id",
                    "\"" + *id + "\" is not a model id (1-128 of A-Z a-z 0-9 . _ -, no \"..\")");
  }
  where += " (id \"" + *id + "\")";
  return id;
}

// Applies the row object `json` over `row` (a copy of the table's row, or a new one when `fresh`).
Status ApplyRow(ModelCapabilities& row, const Json& json, bool fresh, const std::string& where) {
  for (const auto& [key, value] : json.items()) {
    if (std::find(std::begin(kRowKeys), std::end(kRowKeys), key) == std::end(kRowKeys)) {
      return KeyError(where, key, "unknown key; a row's keys are " + Listed(kRowKeys));
    }
    if (key == "id") continue;
    if (Status s = ApplyKey(row, key, value); !s.ok()) {
      return KeyError(where, key, s.error().message);
    }
  }
  if (fresh) {
    for (std::string_view key : kRowKeys) {
      const bool optional = std::find(std::begin(kOptionalKeys), std::end(kOptionalKeys), key) !=
                            std::end(kOptionalKeys);
      if (!optional && !json.contains(std::string(key))) {
        return KeyError(where, key,
                        "missing; a model new to the table needs every key but retired_on and "
                        "replacement");
      }
    }
  }
  return FinishRow(row, where);
}

std::string Usd(double usd) {
  char buffer[32];
  auto [end, ec] = std::to_chars(std::begin(buffer), std::end(buffer), usd);
  return ec == std::errc() ? std::string(buffer, end) : "?";
}

std::string SpaceSeparated(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& s : items) out += (out.empty() ? "" : " ") + s;
  return out;
}

}  // namespace

Result<std::vector<ModelCapabilities>> MergeModelTable(std::vector<ModelCapabilities> base,
                                                       std::string_view document,
                                                       std::string_view source) {
  ASSIGN_OR_RETURN(const Json doc, ReadDocument(document, source));
  std::vector<std::string> where;
  where.reserve(base.size());
  for (const ModelCapabilities& row : base) {
    where.push_back(std::string(source) + ": the row of " + row.id + " it does not change");
  }
  std::set<std::string> ids;
  const Json& rows = doc["models"];
  for (size_t i = 0; i < rows.size(); ++i) {
    std::string at = std::string(source) + ": models[" + std::to_string(i) + "]";
    ASSIGN_OR_RETURN(const std::string id, RowId(rows[i], at));
    if (!ids.insert(id).second) {
      return KeyError(at, "id", "another row of this document has the id \"" + id + "\"");
    }
    auto known = std::find_if(base.begin(), base.end(),
                              [&](const ModelCapabilities& m) { return m.id == id; });
    ModelCapabilities row = known != base.end() ? *known : ModelCapabilities{};
    row.id = id;
    RETURN_IF_ERROR(ApplyRow(row, rows[i], known == base.end(), at));
    if (known != base.end()) {
      *known = std::move(row);
      where[static_cast<size_t>(known - base.begin())] = at;
    } else {
      base.push_back(std::move(row));
      where.push_back(at);
    }
  }
  RETURN_IF_ERROR(CheckReplacements(base, where));
  return base;
}

Result<std::vector<ModelCapabilities>> ParseModelTable(std::string_view document,
                                                       std::string_view source) {
  return MergeModelTable({}, document, source);
}

std::string CurrentReplacement(const std::vector<ModelCapabilities>& table, std::string_view id) {
  const ModelCapabilities* row = FindModel(table, id);
  for (size_t steps = 0; row != nullptr && !row->replacement.empty() && steps <= table.size();
       ++steps) {
    const ModelCapabilities* next = FindModel(table, row->replacement);
    if (next == nullptr) return row->replacement;
    if (next->status != ModelStatus::kRetired) return next->id;
    row = next;
  }
  return "";
}

std::string FormatModelTable(const std::vector<ModelCapabilities>& table) {
  std::string out;
  for (const ModelCapabilities& m : table) {
    if (!out.empty()) out += "\n";
    out += m.id + "  " + std::string(ModelStatusName(m.status));
    if (!m.retired_on.empty()) {
      out += (m.status == ModelStatus::kRetired ? " on " : ", to retire on ") + m.retired_on;
    }
    if (!m.replacement.empty()) out += ", replaced by " + m.replacement;
    out += "\n  sizes " + SpaceSeparated(m.image_sizes) + "; aspect ratios " +
           SpaceSeparated(m.aspect_ratios);
    out += "\n  thinking " +
           (m.thinking_levels.empty() ? "none" : SpaceSeparated(m.thinking_levels)) + "; search " +
           (m.search == Support::kYes ? "yes" : "no") + "; up to " +
           std::to_string(m.max_input_images) + " images a request; input token limit " +
           std::to_string(m.input_token_limit);
    out += "\n  output image tokens:";
    for (const std::string& size : m.image_sizes) {
      out += " " + size + " " + std::to_string(OutputImageTokens(m, size));
    }
    const TokenPrices& p = m.prices;
    out += "\n  USD per million tokens: input text " + Usd(p.input_text) + ", input image " +
           Usd(p.input_image) + ", output text " + Usd(p.output_text) + ", output image " +
           Usd(p.output_image) + ", thoughts " + Usd(p.thoughts) + "; USD per grounded query " +
           Usd(m.usd_per_grounded_query) + "\n";
    out += m.batch_price_factor > 0
               ? "  batch delivery: tokens at " + Usd(m.batch_price_factor) + " × these prices\n"
               : "  batch delivery: not offered\n";
  }
  return out;
}

}  // namespace imgmcp::imaging
