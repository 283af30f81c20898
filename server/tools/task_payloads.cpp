#include "server/tools/task_payloads.h"

#include <utility>

namespace imgmcp::tools {
namespace {

void DropLongData(Json& value) {
  if (value.is_array()) {
    for (Json& item : value) DropLongData(item);
    return;
  }
  if (!value.is_object()) return;
  for (auto& [key, item] : value.items()) {
    if (key == "data" && item.is_string() &&
        item.get_ref<const std::string&>().size() > kKeptDataBytes) {
      item = "[" + std::to_string(item.get_ref<const std::string&>().size()) +
             " bytes of base64, not kept]";
    } else {
      DropLongData(item);
    }
  }
}

// The `inline` the call asked for (its arguments in the row's request), preview by default.
InlineMode InlineOf(const std::string& request_json) {
  const Json request = Json::parse(request_json, nullptr, /*allow_exceptions=*/false);
  if (!request.is_object()) return InlineMode::kPreview;
  const auto args = request.find("arguments");
  if (args == request.end() || !args->is_object()) return InlineMode::kPreview;
  const auto mode = args->find("inline");
  if (mode == args->end() || !mode->is_string()) return InlineMode::kPreview;
  const std::string& name = mode->get_ref<const std::string&>();
  if (name == "full") return InlineMode::kFull;
  if (name == "none") return InlineMode::kNone;
  return InlineMode::kPreview;
}

}  // namespace

Json RequestForTaskRow(const Json& arguments) {
  Json kept = arguments;
  DropLongData(kept);
  return kept;
}

Json ResultForTaskRow(Json result) {
  auto content = result.find("content");
  if (content == result.end() || !content->is_array()) return result;
  for (Json& block : *content) {
    if (!block.is_object() || block.value("type", "") != "image") continue;
    block.erase("data");
    block[kRebuiltImageKey] = true;
  }
  return result;
}

Json ResultFromTaskRow(Json stored, const std::string& request_json,
                       const ImageBlockSource& images) {
  auto content = stored.find("content");
  if (content == stored.end() || !content->is_array()) return stored;
  const Json structured = stored.value("structuredContent", Json::object());
  const std::string session_id = structured.value("session_id", "");
  const int64_t version = structured.value("version", int64_t{0});
  for (Json& block : *content) {
    if (!block.is_object() || !block.contains(kRebuiltImageKey)) continue;
    Result<Json> rebuilt = images(session_id, version, InlineOf(request_json));
    if (rebuilt.ok() && rebuilt->is_object()) {
      block = std::move(*rebuilt);
    } else {
      std::string text = "(the image of version " + std::to_string(version);
      text += " of session '" + session_id + "' is no longer shown here: ";
      text += rebuilt.ok() ? "nothing to show" : rebuilt.error().message;
      text += ")";
      block = Json{{"type", "text"}, {"text", std::move(text)}};
    }
  }
  return stored;
}

}  // namespace imgmcp::tools
