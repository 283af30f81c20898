#include "tests/fake_gemini/script.h"

#include <vector>

namespace imgmcp::fake_gemini {
namespace {

Error Bad(const std::string& key, const char* want) {
  return Error(ErrorCode::kInvalidArgument, "script action field \"" + key + "\" must be " + want);
}

}  // namespace

Result<Action> ParseAction(const Json& json) {
  if (!json.is_object()) {
    return MakeError(ErrorCode::kInvalidArgument, "each script action must be a JSON object");
  }
  Action a;
  for (const auto& item : json.items()) {
    // Named copies: lambdas cannot capture structured bindings before clang 16.
    const std::string& key = item.key();
    const Json& value = item.value();
    auto want_int = [&](int* out) -> Status {
      if (!value.is_number_integer() || value.get<int64_t>() < 0 || value.get<int64_t>() > 1e9) {
        return Bad(key, "a non-negative integer");
      }
      *out = value.get<int>();
      return Status::Ok();
    };
    auto want_string = [&](std::string* out) -> Status {
      if (!value.is_string()) return Bad(key, "a string");
      *out = value.get<std::string>();
      return Status::Ok();
    };
    auto want_bool = [&](bool* out) -> Status {
      if (!value.is_boolean()) return Bad(key, "true or false");
      *out = value.get<bool>();
      return Status::Ok();
    };
    Status s;
    if (key == "status") {
      s = want_int(&a.status);
      if (s.ok() && (a.status < 100 || a.status > 599)) s = Bad(key, "an HTTP status 100-599");
    } else if (key == "message") {
      s = want_string(&a.message);
    } else if (key == "api_status") {
      s = want_string(&a.api_status);
    } else if (key == "retry_delay") {
      s = want_string(&a.retry_delay);
    } else if (key == "quota_id") {
      s = want_string(&a.quota_id);
    } else if (key == "reason") {
      s = want_string(&a.reason);
    } else if (key == "raw_body") {
      std::string body;
      s = want_string(&body);
      a.raw_body = body;
    } else if (key == "delay_ms") {
      s = want_int(&a.delay_ms);
    } else if (key == "block_reason") {
      s = want_string(&a.block_reason);
    } else if (key == "finish_reason") {
      s = want_string(&a.finish_reason);
    } else if (key == "finish_message") {
      s = want_string(&a.finish_message);
    } else if (key == "text_only") {
      std::string text;
      s = want_string(&text);
      a.text_only = text;
    } else if (key == "thought_parts") {
      s = want_int(&a.thought_parts);
      if (s.ok() && a.thought_parts > 16) s = Bad(key, "at most 16");
    } else if (key == "jpeg_labelled_png") {
      s = want_bool(&a.jpeg_labelled_png);
    } else if (key == "truncated_body") {
      s = want_bool(&a.truncated_body);
    } else if (key == "malformed_json") {
      s = want_bool(&a.malformed_json);
    } else if (key == "drop_connection") {
      s = want_bool(&a.drop_connection);
    } else if (key == "fixed_image_file") {
      s = want_string(&a.fixed_image_file);
    } else if (key == "echo_headers") {
      s = want_string(&a.echo_headers);
      if (s.ok() && a.echo_headers != "json" && a.echo_headers != "text") {
        s = Bad(key, "\"json\" or \"text\"");
      }
    } else if (key == "answer_bytes") {
      s = want_int(&a.answer_bytes);
    } else if (key == "chunked") {
      s = want_bool(&a.chunked);
    } else if (key == "hold") {
      s = want_string(&a.hold);
      if (s.ok() && a.hold.empty()) s = Bad(key, "a gate name (a non-empty string)");
    } else {
      return MakeError(ErrorCode::kInvalidArgument, "unknown script action field \"" + key + "\"");
    }
    if (!s.ok()) return s.error();
  }
  return a;
}

Result<std::vector<Action>> ParseScript(const Json& json) {
  const Json* list = &json;
  if (json.is_object() && json.contains("actions")) list = &json.at("actions");
  std::vector<Action> actions;
  if (list->is_object()) {
    auto a = ParseAction(*list);
    if (!a.ok()) return a.error();
    actions.push_back(std::move(a).value());
    return actions;
  }
  if (!list->is_array()) {
    return MakeError(ErrorCode::kInvalidArgument, "the script must be a JSON array of actions");
  }
  for (const Json& item : *list) {
    auto a = ParseAction(item);
    if (!a.ok()) return a.error();
    actions.push_back(std::move(a).value());
  }
  return actions;
}

Json ActionToJson(const Action& a) {
  Json j = Json::object();
  if (a.status != 0) j["status"] = a.status;
  if (!a.message.empty()) j["message"] = a.message;
  if (!a.api_status.empty()) j["api_status"] = a.api_status;
  if (!a.retry_delay.empty()) j["retry_delay"] = a.retry_delay;
  if (!a.quota_id.empty()) j["quota_id"] = a.quota_id;
  if (!a.reason.empty()) j["reason"] = a.reason;
  if (a.raw_body) j["raw_body"] = *a.raw_body;
  if (a.delay_ms != 0) j["delay_ms"] = a.delay_ms;
  if (!a.block_reason.empty()) j["block_reason"] = a.block_reason;
  if (!a.finish_reason.empty()) j["finish_reason"] = a.finish_reason;
  if (!a.finish_message.empty()) j["finish_message"] = a.finish_message;
  if (a.text_only) j["text_only"] = *a.text_only;
  if (a.thought_parts != 0) j["thought_parts"] = a.thought_parts;
  if (a.jpeg_labelled_png) j["jpeg_labelled_png"] = true;
  if (a.truncated_body) j["truncated_body"] = true;
  if (a.malformed_json) j["malformed_json"] = true;
  if (a.drop_connection) j["drop_connection"] = true;
  if (!a.fixed_image_file.empty()) j["fixed_image_file"] = a.fixed_image_file;
  if (!a.echo_headers.empty()) j["echo_headers"] = a.echo_headers;
  if (a.answer_bytes != 0) j["answer_bytes"] = a.answer_bytes;
  if (a.chunked) j["chunked"] = true;
  if (!a.hold.empty()) j["hold"] = a.hold;
  return j;
}

}  // namespace imgmcp::fake_gemini
