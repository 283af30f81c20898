#include "server/tools/version_details.h"

#include <optional>
#include <string_view>

#include "common/json_reader.h"

namespace imgmcp::tools {
namespace {

constexpr size_t kMaxQuotedText = 300;

Json Parse(const std::string& details) {
  Json j = Json::parse(details, nullptr, /*allow_exceptions=*/false);
  return j.is_object() ? j : Json::object();
}

std::string Dump(const Json& j) { return j.dump(-1, ' ', false, Json::error_handler_t::replace); }

// One line of at most kMaxQuotedText bytes (cut on a UTF-8 boundary).
std::string OneLine(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (out.size() >= kMaxQuotedText) {
      while (!out.empty() && (static_cast<unsigned char>(out.back()) & 0xC0) == 0x80) {
        out.pop_back();
      }
      if (!out.empty() && static_cast<unsigned char>(out.back()) >= 0xC0) out.pop_back();
      return out + "…";
    }
    out.push_back(c == '\n' || c == '\r' || c == '\t' ? ' ' : c);
  }
  return out;
}

std::optional<int64_t> Count(const Json& usage, const char* key) {
  auto it = usage.find(key);
  if (it == usage.end() || !it->is_number_integer()) return std::nullopt;
  return it->get<int64_t>();
}

}  // namespace

Json ParamsJson(const imaging::GenerationOptions& o, const std::string& model) {
  Json p = {{"model", model}};
  if (!o.image_size.empty()) p["image_size"] = o.image_size;
  if (!o.aspect_ratio.empty()) p["aspect_ratio"] = o.aspect_ratio;
  if (!o.thinking.empty()) p["thinking"] = o.thinking;
  if (o.search) p["search"] = true;
  return p;
}

std::string MakeVersionDetails(const Json& params, const imaging::BackendImage& answer,
                               const TurnRecord& turn, const Json& cost) {
  Json d = {{"params", params}};
  if (!answer.text.empty()) d["model_text"] = answer.text;
  if (!answer.finish_reason.empty()) d["finish_reason"] = answer.finish_reason;
  if (answer.usage.is_object()) d["usage"] = answer.usage;
  if (!answer.sources.empty()) d["sources"] = AnswerFields(answer, true)["sources"];
  if (cost.is_object()) d["cost"] = cost;
  if (!turn.replay.empty()) {
    d["turn"] = {{"user_image", turn.user_image}, {"replay", turn.replay}};
  }
  return Dump(d);
}

Json ParamsOf(const std::string& details) {
  // Read on every version a result shows: only the top-level "params" is parsed; the rest of the
  // details (usage, cost, the turn's replay data) is only scanned past.
  const std::optional<std::string_view> text = MemberText(details, "params");
  if (!text) return Json::object();
  Json params = Json::parse(*text, nullptr, /*allow_exceptions=*/false);
  return params.is_object() ? params : Json::object();
}

std::optional<TurnRecord> TurnOf(const std::string& details) {
  Json d = Parse(details);
  auto it = d.find("turn");
  if (it == d.end() || !it->is_object()) return std::nullopt;
  auto replay = it->find("replay");
  auto user_image = it->find("user_image");
  if (replay == it->end() || !replay->is_string() || replay->get_ref<const std::string&>().empty())
    return std::nullopt;
  TurnRecord turn;
  turn.replay = replay->get<std::string>();
  turn.user_image = user_image != it->end() && user_image->is_boolean() && user_image->get<bool>();
  return turn;
}

Json AnswerFields(const imaging::BackendImage& answer, bool search) {
  Json f = Json::object();
  if (!answer.text.empty()) f["model_text"] = answer.text;
  if (answer.usage.is_object()) f["usage"] = answer.usage;
  if (!answer.finish_reason.empty()) f["finish_reason"] = answer.finish_reason;
  if (search || !answer.sources.empty()) {
    Json sources = Json::array();
    for (const imaging::Source& s : answer.sources) {
      sources.push_back({{"title", s.title}, {"uri", s.uri}});
    }
    f["sources"] = std::move(sources);
  }
  return f;
}

Json RecordedAnswerFields(const std::string& details) {
  const Json d = Parse(details);
  Json f = Json::object();
  for (const char* key : {"model_text", "usage", "finish_reason", "sources", "cost"}) {
    if (auto it = d.find(key); it != d.end()) f[key] = *it;
  }
  if (f.contains("model_text")) f["text"] = f["model_text"];
  const Json params = ParamsOf(details);
  if (auto search = params.find("search"); search != params.end() && search->is_boolean() &&
                                           search->get<bool>() && !f.contains("sources")) {
    f["sources"] = Json::array();
  }
  return f;
}

std::string AnswerLines(const imaging::BackendImage& answer, bool search) {
  std::string out;
  if (!answer.text.empty()) out += "\nModel text: \"" + OneLine(answer.text) + "\"";
  if (answer.usage.is_object()) {
    std::string usage;
    auto add = [&](const char* label, const char* key) {
      if (auto n = Count(answer.usage, key)) {
        usage += (usage.empty() ? "" : ", ") + std::string(label) + " " + std::to_string(*n);
      }
    };
    add("prompt", "promptTokenCount");
    add("output", "candidatesTokenCount");
    add("thinking", "thoughtsTokenCount");
    add("total", "totalTokenCount");
    if (!usage.empty()) out += "\nUsage: " + usage + " tokens";
  }
  if (!answer.finish_reason.empty()) out += "\nFinish reason: " + answer.finish_reason;
  if (search || !answer.sources.empty()) {
    std::string sources;
    for (const imaging::Source& s : answer.sources) {
      sources += (sources.empty() ? "" : "; ") + OneLine(s.title) + " <" + OneLine(s.uri) + ">";
    }
    out += "\nSources: " + (sources.empty() ? std::string("none reported") : sources);
  }
  return out;
}

}  // namespace imgmcp::tools
