#include "server/tools/store_task_ledger.h"

#include <utility>

#include "common/random.h"
#include "server/tools/task_payloads.h"
#include "server/tools/tool_args.h"
#include "session/data_dir.h"
#include "session/principal_scope.h"
#include "session/task_records.h"
#include "session/task_rules.h"

namespace imgmcp::tools {

namespace {

session::TaskStatus StatusOf(mcp::TaskState state) {
  switch (state) {
    case mcp::TaskState::kWorking:
      return session::TaskStatus::kWorking;
    case mcp::TaskState::kInputRequired:
      return session::TaskStatus::kInputRequired;
    case mcp::TaskState::kCompleted:
      return session::TaskStatus::kCompleted;
    case mcp::TaskState::kFailed:
      return session::TaskStatus::kFailed;
    case mcp::TaskState::kCancelled:
      return session::TaskStatus::kCancelled;
  }
  return session::TaskStatus::kFailed;
}

std::optional<Json> ParsedOrNull(const std::string& text) {
  if (text.empty()) return std::nullopt;
  Json parsed = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded()) return std::nullopt;
  return parsed;
}

// The version a completed result reports (structuredContent.version), if any.
std::optional<int64_t> VersionIn(const Json& result) {
  auto structured = result.find("structuredContent");
  if (structured == result.end() || !structured->is_object()) return std::nullopt;
  auto version = structured->find("version");
  if (version == structured->end() || !version->is_number_integer()) return std::nullopt;
  return version->get<int64_t>();
}

}  // namespace

mcp::TaskState TaskStateOf(session::TaskStatus status) {
  switch (status) {
    case session::TaskStatus::kWorking:
      return mcp::TaskState::kWorking;
    case session::TaskStatus::kInputRequired:
      return mcp::TaskState::kInputRequired;
    case session::TaskStatus::kCompleted:
      return mcp::TaskState::kCompleted;
    case session::TaskStatus::kFailed:
      return mcp::TaskState::kFailed;
    case session::TaskStatus::kCancelled:
      return mcp::TaskState::kCancelled;
  }
  return mcp::TaskState::kFailed;
}

// Whose sessions the task's call reached (Create keeps it with the request): "" the local
// principal's.
std::string PrincipalOf(const std::string& request_json) {
  const Json request = Json::parse(request_json, nullptr, /*allow_exceptions=*/false);
  if (!request.is_object()) return {};
  auto principal = request.find("principal");
  if (principal == request.end() || !principal->is_string() ||
      !session::IsValidPrincipal(principal->get_ref<const std::string&>())) {
    return {};
  }
  return principal->get<std::string>();
}

mcp::TaskSnapshot SnapshotOf(const session::TaskRecord& record) {
  mcp::TaskSnapshot s;
  s.task_id = record.task_id;
  s.state = TaskStateOf(record.status);
  s.status_message = record.status_message;
  s.created_at = record.created_at;
  s.updated_at = record.updated_at;
  s.ttl_ms = record.ttl_ms;
  s.poll_interval_ms = record.poll_interval_ms;
  if (s.state == mcp::TaskState::kCompleted) {
    s.result = ParsedOrNull(record.result_json);
    if (!s.result && record.version) {
      const std::string session_id(session::SplitScopedSessionId(record.session_id).session_id);
      const std::string text = "Committed version " + std::to_string(*record.version) +
                               " of session '" + session_id + "'.";
      s.result =
          Json{{"content", Json::array({{{"type", "text"}, {"text", text}}})},
               {"structuredContent", {{"session_id", session_id}, {"version", *record.version}}},
               {"isError", false}};
    }
  }
  if (s.state == mcp::TaskState::kFailed) {
    s.error = ParsedOrNull(record.error_json);
    if (!s.error) s.error = Json{{"code", -32603}, {"message", record.status_message}};
  }
  if (s.state == mcp::TaskState::kInputRequired) s.input_requests = Json::object();
  return s;
}

StoreTaskLedger::StoreTaskLedger(session::SessionStore& store, imaging::PreviewOptions preview,
                                 imaging::DecodeLimits limits)
    : store_(store), preview_(preview), limits_(limits) {}

Result<Json> StoreTaskLedger::ImageBlock(const std::string& session_id, int64_t version,
                                         InlineMode mode) const {
  ASSIGN_OR_RETURN(session::VersionInfo info, store_.GetVersion(session_id, version));
  ASSIGN_OR_RETURN(std::string bytes, store_.ReadImage(info));
  PreparedImage image =
      PrepareImage(ImageAttachment{mode, &bytes, info.mime_type}, preview_, limits_);
  if (!image.preview_error.empty()) return MakeError(ErrorCode::kInternal, image.preview_error);
  return std::move(image.block);
}

mcp::TaskSnapshot StoreTaskLedger::Snapshot(const session::TaskRecord& record) const {
  mcp::TaskSnapshot s = SnapshotOf(record);
  if (s.result) {
    // The result names the session as its owner does; its images are read under the stored id.
    const std::string principal = PrincipalOf(record.request_json);
    s.result = ResultFromTaskRow(
        std::move(*s.result), record.request_json,
        [this, &principal](const std::string& session_id, int64_t version, InlineMode mode) {
          return ImageBlock(session::ScopedSessionId(principal, session_id), version, mode);
        });
  }
  return s;
}

Result<mcp::TaskSnapshot> StoreTaskLedger::Create(const mcp::Caller& caller,
                                                  const std::string& tool, const Json& arguments,
                                                  const mcp::TaskOptions& options) {
  session::NewTask task;
  task.owner = caller.owner;
  auto id = arguments.find("session_id");
  if (id != arguments.end() && id->is_string()) {
    const std::string& named = id->get_ref<const std::string&>();
    // An invalid id is kept as given: the call fails on it, and the row names it.
    task.session_id = session::IsValidSessionId(named)
                          ? session::ScopedSessionId(caller.principal, named)
                          : named;
  }
  task.tool = tool;
  const bool batch = !batch_model_.empty() && tool == "generate_image" && arguments.is_object() &&
                     arguments.value("delivery", Json()) == "batch";
  Json request = {
      {"name", tool},
      {"arguments", RequestForTaskRow(batch ? BatchTask(caller, arguments, task) : arguments)}};
  if (!caller.principal.empty()) request["principal"] = caller.principal;
  task.request_json = request.dump();
  task.ttl_ms = options.ttl_ms;
  task.poll_interval_ms = options.poll_interval_ms;
  ASSIGN_OR_RETURN(session::TaskRecord record, store_.CreateTask(task));
  return SnapshotOf(record);
}

Json StoreTaskLedger::BatchTask(const mcp::Caller& caller, Json arguments,
                                session::NewTask& task) const {
  const Json model = arguments.value("model", Json(batch_model_));
  if (!model.is_string() || !session::IsBatchName(model.get<std::string>())) {
    return arguments;  // not a model: an ordinary task, which the handler fails naming it
  }
  task.batch_model = model.get<std::string>();
  task.status_message = BatchWaitingMessage(batch_window_);
  if (!arguments.contains("session_id") && !arguments.contains("idempotency_key")) {
    const std::string minted = "img-" + RandomHex(6);
    arguments["session_id"] = minted;
    task.session_id = session::ScopedSessionId(caller.principal, minted);
  }
  return arguments;
}

Result<std::optional<mcp::TaskSnapshot>> StoreTaskLedger::Get(const std::string& task_id,
                                                              const std::string& owner) {
  if (!session::IsValidTaskId(task_id)) return std::optional<mcp::TaskSnapshot>();
  ASSIGN_OR_RETURN(std::optional<session::TaskRecord> record, store_.GetTask(task_id, owner));
  if (!record) return std::optional<mcp::TaskSnapshot>();
  return std::optional<mcp::TaskSnapshot>(Snapshot(*record));
}

Result<mcp::TaskSnapshot> StoreTaskLedger::Set(const std::string& task_id, const std::string& owner,
                                               mcp::TaskState state,
                                               const std::optional<Json>& payload) {
  session::TaskUpdate update;
  update.task_id = task_id;
  update.owner = owner;
  update.status = StatusOf(state);
  if (state == mcp::TaskState::kCompleted) {
    update.result_json = ResultForTaskRow(payload.value_or(Json::object())).dump();
    if (payload) update.version = VersionIn(*payload);
  }
  if (state == mcp::TaskState::kFailed) update.error_json = payload.value_or(Json::object()).dump();
  // What a task said while it worked (a batch task: where its job was) is over once it ends; a
  // failure says why instead.
  if (state == mcp::TaskState::kCompleted || state == mcp::TaskState::kFailed) {
    update.status_message = "";
    if (payload && payload->is_object() && payload->value("message", Json()).is_string() &&
        state == mcp::TaskState::kFailed) {
      update.status_message = (*payload)["message"].get<std::string>();
    }
  }
  ASSIGN_OR_RETURN(session::TaskRecord record, store_.UpdateTask(update));
  return SnapshotOf(record);
}

Result<mcp::TaskSnapshot> StoreTaskLedger::EndUncommitted(const std::string& task_id,
                                                          const std::string& owner,
                                                          mcp::TaskState state,
                                                          const std::optional<Json>& error) {
  session::TaskUpdate update;
  update.task_id = task_id;
  update.owner = owner;
  update.status = StatusOf(state);
  update.unless_committed = true;
  if (state == mcp::TaskState::kFailed) {
    update.error_json = error.value_or(Json::object()).dump();
    if (error && error->contains("message") && (*error)["message"].is_string()) {
      update.status_message = (*error)["message"].get<std::string>();
    }
  }
  ASSIGN_OR_RETURN(session::TaskRecord record, store_.UpdateTask(update));
  return SnapshotOf(record);
}

Result<mcp::TaskList> StoreTaskLedger::List(const std::string& owner,
                                            const std::optional<std::string>& cursor, int limit) {
  ASSIGN_OR_RETURN(session::TaskPage page, store_.ListTasks(owner, cursor, limit));
  mcp::TaskList list;
  for (const session::TaskRecord& record : page.tasks) list.tasks.push_back(SnapshotOf(record));
  list.next_cursor = std::move(page.next_cursor);
  return list;
}

}  // namespace imgmcp::tools
