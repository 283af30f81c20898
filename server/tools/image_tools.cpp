#include "server/tools/image_tools.h"

#include "common/log.h"
#include "common/random.h"
#include "common/trace_context.h"
#include "common/usd.h"
#include "server/tools/arguments.h"
#include "server/tools/call_progress.h"
#include "server/tools/caller_store.h"
#include "server/tools/chain_plan.h"
#include "server/tools/tool_results.h"
#include "server/tools/uris.h"
#include "server/tools/version_details.h"
#include "session/principal_scope.h"
#include "session/spend_rules.h"
#include "session/task_records.h"

namespace imgmcp::tools {
namespace {

constexpr char kLog[] = "tools";

// Failures are logged at the default level: what the caller got wrong at info, what went wrong
// here (disk full, a backend down, corrupt data) at warning.
void LogFailure(const std::string& tool, const Error& error) {
  std::string message = error.message;
  if (message.size() > 300) message = message.substr(0, 300) + "…";
  const std::string line = tool + " failed (" + ErrorCodeName(error.code) + "): " + message;
  switch (error.code) {
    case ErrorCode::kInvalidArgument:
    case ErrorCode::kNotFound:
    case ErrorCode::kConflict:
    case ErrorCode::kPermissionDenied:
    case ErrorCode::kTooLarge:
    case ErrorCode::kCancelled:
    case ErrorCode::kFailedPrecondition:
      return log::Info(kLog, line);
    default:
      return log::Warn(kLog, line);
  }
}

mcp::ToolResult Fail(const std::string& tool, const Error& error) {
  LogFailure(tool, error);
  return mcp::ToolResult::ErrorText(tool + " failed: " + error.message);
}

// A tool's result, or its failure logged and told to the caller as an isError result.
mcp::ToolResult Answer(const std::string& tool, Result<mcp::ToolResult> result) {
  if (!result.ok()) return Fail(tool, result.error());
  return std::move(result).value();
}

// `error` with `more` said after its message.
Error Appended(Error error, const std::string& more) {
  error.message += more;
  return error;
}

// Clients of 2025-06-18 and later read structuredContent; older ones only the text.
bool ReadsStructuredContent(const mcp::ToolCallContext& ctx) {
  return ctx.ProtocolVersion() >= "2025-06-18";
}

// What a saved copy adds to a result: structuredContent fields and a line of text.
Json SavedFields(const SavedCopy& saved) {
  Json fields = Json::object();
  fields["saved_to"] = saved.path.string();
  fields["saved_bytes"] = saved.bytes;
  fields["saved_format"] = SaveFormatName(saved.format);
  return fields;
}

std::string SavedLine(const SavedCopy& saved) {
  return "\nSaved a copy to " + saved.path.string() + " (" + SaveFormatName(saved.format) + ", " +
         HumanBytes(saved.bytes) + (saved.replaced ? ", replacing the file that was there" : "") +
         ").";
}

// The structuredContent fields of a backend's answer, with the parameters it was asked with.
Json AnswerExtra(const imaging::BackendImage& image, bool search, const Json& params) {
  Json extra = AnswerFields(image, search);
  if (!image.text.empty()) extra["text"] = image.text;  // the older name of model_text
  extra["params"] = params;
  return extra;
}

// What `answer` cost: charged in place of the call's hold, counted in `metrics` (may be null),
// put in structuredContent (`extra`) and the version's details (`cost_json`); its text line.
// " [note]" for a non-empty backend note (e.g. why the offline backend is in use), else "".
std::string BackendNote(const std::string& note) { return note.empty() ? "" : " [" + note + "]"; }

// " The local backend ignores …" for the parameters a model has no use for; "" for none.
std::string IgnoredNote(const imaging::ImageBackend& backend,
                        const std::vector<std::string>& ignored) {
  if (ignored.empty()) return "";
  return "\nIgnored: " + imaging::JoinList(ignored, " and ") + " (no meaning for the " +
         backend.Name() + " backend" + (backend.Name() == "local" ? ", which works offline" : "") +
         ").";
}

std::string ChargeAnswer(const imaging::ModelCapabilities& model,
                         const imaging::BackendImage& answer, CallSpend& spend,
                         metrics::Metrics* metrics, Json* extra, Json* cost_json) {
  const imaging::CallCost cost =
      imaging::PriceUsage(model, answer.usage, answer.grounding_queries, answer.price_factor);
  spend.Settle(cost);
  if (metrics != nullptr) {
    metrics->RecordSpend(cost.priced_model, cost.usd, cost.input_tokens, cost.output_image_tokens,
                         cost.output_text_tokens, cost.thoughts_tokens);
  }
  *cost_json = imaging::CostJson(cost);
  (*extra)["cost"] = *cost_json;
  return "\n" + imaging::CostLine(cost);
}

}  // namespace

ImageTools::ImageTools(session::SessionStore& store, imaging::ImageBackend& backend,
                       const ImageInputResolver& inputs, mcp::ResourceNotifier* notifier,
                       ImageToolsOptions options)
    : store_(store),
      backend_(backend),
      inputs_(inputs),
      notifier_(notifier),
      options_(std::move(options)),
      own_timers_(options_.timers != nullptr ? nullptr : std::make_unique<TimerThread>()),
      timers_(options_.timers != nullptr ? *options_.timers : *own_timers_),
      backend_slots_(options_.max_concurrent_backend_calls),
      memory_(options_.max_inflight_bytes, backend_, inputs_, options_.limits,
              options_.chain_turns),
      saves_(options_.save) {
  argument_options_.max_prompt_bytes = options_.max_prompt_bytes;
  argument_options_.save_roots_description = saves_.DescribeRoots();
  argument_options_.max_versions = options_.max_versions;
  argument_options_.idle_days = options_.idle_days;
  inputs_.ApplyLimits(argument_options_);
  OfferModels(backend_.Models(), argument_options_);
  argument_options_.model_note = [&backend = backend_](const std::string& model) {
    return backend.ModelNote(model);
  };
  store_.SetChangeListener([this](const session::StoreChange& change) {
    const session::SessionScope scope = session::SplitScopedSessionId(change.session_id);
    AnnounceChange(std::string(scope.principal), std::string(scope.session_id), change.new_session);
  });
}

ImageTools::~ImageTools() { store_.SetChangeListener(nullptr); }

namespace {

// The calls the audit trail keeps: every one that can write (get_image only with save_to).
template <typename Args>
bool Writes(const Args& /*args*/) {
  return true;
}
bool Writes(const GetImageArgs& args) { return args.save.save_to.has_value(); }

template <typename Args>
std::string SessionNamed(const Args& args) {
  if constexpr (std::is_same_v<Args, GenerateImageArgs>) {
    return args.SessionFor().value_or("");
  } else {
    return args.session_id;
  }
}

template <typename Args>
std::string IdempotencyKeyOf(const Args& args) {
  if constexpr (requires { args.idempotency_key; }) {
    return args.idempotency_key.value_or("");
  } else {
    return "";
  }
}

// Records a call that writes in the audit trail: who, what, the session and version it made, its
// key, cost and trace, and how it went.
void AuditCall(mcp::AuditTrail& audit, const std::string& tool, const std::string& session_id,
               const std::string& key, const mcp::ToolCallContext& ctx,
               const mcp::ToolResult& result) {
  mcp::AuditEntry entry;
  entry.caller = ctx.caller();
  entry.action = tool;
  entry.session_id = session_id;
  entry.idempotency_key = key;
  entry.task_id = ctx.TaskId();
  if (auto trace = ParseTraceParent(ctx.TraceParent())) entry.trace_id = trace->trace_id;
  if (result.structured_content && result.structured_content->is_object()) {
    const Json& s = *result.structured_content;
    if (auto id = s.find("session_id"); id != s.end() && id->is_string()) {
      entry.session_id = id->get<std::string>();  // generate_image may have made one up
    }
    if (auto v = s.find("version"); v != s.end() && v->is_number_integer()) {
      entry.version = v->get<int64_t>();
    }
    if (auto cost = s.find("cost"); cost != s.end() && cost->is_object()) {
      entry.cost_usd = cost->value("usd", 0.0);
    }
  }
  entry.outcome = "ok";
  if (result.is_error) {
    std::string text;
    if (!result.content.empty() && result.content[0].is_object()) {
      text = result.content[0].value("text", "");
    }
    entry.outcome = "error: " + log::Clip(text, 300);
  }
  audit.Record(entry);
}

}  // namespace

template <typename Args>
mcp::TypedTool<Args> ImageTools::Bind(
    mcp::ToolDefinition&& definition,
    mcp::ToolResult (ImageTools::*handler)(const Args&, mcp::ToolCallContext&)) {
  mcp::TypedTool<Args> tool;
  tool.definition = std::move(definition);
  tool.parse = [this, name = tool.definition.name](const Json& arguments) {
    auto parsed = ParseArguments<Args>(arguments, argument_options_);
    if (!parsed.ok()) LogFailure(name, parsed.error());
    return parsed;
  };
  tool.handler = [this, handler, name = tool.definition.name](const Args& args,
                                                              mcp::ToolCallContext& ctx) {
    mcp::ToolResult result = (this->*handler)(args, ctx);
    if (options_.audit != nullptr && Writes(args) && !result.input_required && !result.handed_off) {
      AuditCall(*options_.audit, name, SessionNamed(args), IdempotencyKeyOf(args), ctx, result);
    }
    return result;
  };
  return tool;
}

std::vector<mcp::ToolSpec> ImageTools::Tools() {
  const ArgumentOptions& o = argument_options_;
  auto generate = Bind(GenerateImageDefinition(o), &ImageTools::GenerateImage);
  generate.admission = [this](const GenerateImageArgs& a, const mcp::Caller& caller) {
    return ReserveSessionTurn(caller, a.SessionFor());
  };
  auto edit = Bind(EditImageDefinition(o), &ImageTools::EditImage);
  edit.admission = [this](const EditImageArgs& a, const mcp::Caller& caller) {
    return ReserveSessionTurn(caller, a.session_id);
  };
  auto reset = Bind(ResetSessionDefinition(o), &ImageTools::ResetSession);
  reset.admission = [this](const ResetSessionArgs& a, const mcp::Caller& caller) {
    return ReserveSessionTurn(caller, a.session_id);
  };
  std::vector<mcp::ToolSpec> tools;
  tools.push_back(mcp::MakeToolSpec(std::move(generate)));
  tools.push_back(mcp::MakeToolSpec(std::move(edit)));
  tools.push_back(mcp::MakeToolSpec(Bind(GetImageDefinition(o), &ImageTools::GetImage)));
  tools.push_back(mcp::MakeToolSpec(std::move(reset)));
  return tools;
}

namespace {

// A session turn reserved at arrival, carried to the handler by the protocol core.
class SessionTurnReservation final : public mcp::CallReservation {
 public:
  explicit SessionTurnReservation(std::unique_ptr<session::TurnReservation> turn)
      : turn(std::move(turn)) {}
  std::unique_ptr<session::TurnReservation> turn;
};

}  // namespace

std::unique_ptr<mcp::CallReservation> ImageTools::ReserveSessionTurn(
    const mcp::Caller& caller, const std::optional<std::string>& session_id) {
  if (!session_id) return nullptr;  // minted by the handler: a new session, no line to join
  CallerStore scoped(store_, caller);
  auto turn = scoped.get().ReserveTurn(*session_id);
  if (!turn.ok()) return nullptr;
  return std::make_unique<SessionTurnReservation>(std::move(*turn));
}

template <typename Args>
std::optional<session::IdempotencyRecord> ImageTools::KeyOf(const std::string& tool,
                                                            const Args& args,
                                                            const mcp::ToolCallContext* ctx) const {
  std::string key;
  if (args.idempotency_key) {
    key = *args.idempotency_key;
  } else if (ctx != nullptr && !ctx->TaskId().empty()) {
    key = session::TaskIdempotencyKey(ctx->TaskId());
  } else {
    return std::nullopt;
  }
  return session::IdempotencyRecord{std::move(key), ArgumentsDigest(tool, args, argument_options_)};
}

namespace {

Result<std::unique_ptr<session::EditTurn>> TakeTurn(session::SessionStore& store,
                                                    const std::string& session_id,
                                                    mcp::ToolCallContext& ctx,
                                                    CallProgress& progress) {
  session::TurnOptions turn_options;
  turn_options.cancel = ctx.Cancellation();
  turn_options.on_queued = [&](int ahead) {
    progress.Report("queued behind " + std::to_string(ahead) + " edit" + (ahead == 1 ? "" : "s") +
                    " of session '" + session_id + "'");
  };
  turn_options.on_other_process = [&] {
    progress.Report("waiting for another imgmcp process that is editing session '" + session_id +
                    "'");
  };
  // Use the place drawn when the call arrived, when there is one for this session.
  std::unique_ptr<mcp::CallReservation> reserved = ctx.TakeReservation();
  if (auto* r = dynamic_cast<SessionTurnReservation*>(reserved.get());
      r != nullptr && r->turn && r->turn->session_id() == session_id) {
    return store.AcquireReservedTurn(std::move(r->turn), turn_options);
  }
  return store.AcquireTurn(session_id, turn_options);
}

}  // namespace

template <typename Fn>
Result<imaging::BackendImage> ImageTools::RunBackend(const std::string& what,
                                                     mcp::ToolCallContext& ctx, Fn&& call) {
  CallProgress progress(ctx);
  imaging::CallContext call_ctx;
  call_ctx.cancel = ctx.Cancellation();
  call_ctx.deadline = std::chrono::steady_clock::now() + options_.backend_deadline;
  call_ctx.on_progress = [&progress](const std::string& message) { progress.Report(message); };
  call_ctx.traceparent = ctx.TraceParent();
  Result<imaging::BackendImage> out = Error(ErrorCode::kInternal, "the backend did not run");
  backend_slots_.Run(ctx.Cancellation(), [&] {
    ProgressHeartbeat heartbeat(progress, what, options_.heartbeat_interval, timers_);
    out = call(call_ctx);
  });
  if (ctx.Cancellation().stop_requested()) {
    return Error(ErrorCode::kCancelled, "cancelled by the client; nothing was committed");
  }
  return out;
}

Result<const imaging::ModelCapabilities*> ImageTools::ChooseModel(
    const imaging::GenerationOptions& options, std::vector<std::string>* ignored) const {
  const imaging::ModelCapabilities* model = nullptr;
  RETURN_IF_ERROR(imaging::CheckGenerationOptions(backend_.Models(), options, &model, ignored));
  return model;
}

namespace {

// What a chain edit says it replayed (`turns` turns, of `versions`), or why it replayed nothing.
std::string ChainNote(size_t turns, const std::vector<int64_t>& versions,
                      const std::string& stopped) {
  if (turns == 0) {
    return "\nContext: chain found no earlier turn to replay (" + stopped +
           "); the image was sent with the instruction instead.";
  }
  std::string list;
  for (int64_t v : versions) list += (list.empty() ? "" : ", ") + std::to_string(v);
  return "\nContext: chain replayed the turn" + std::string(turns == 1 ? "" : "s") + " of version" +
         (turns == 1 ? " " : "s ") + list + " (nothing older: " + stopped + ").";
}

}  // namespace

Result<std::vector<imaging::ChainTurn>> ImageTools::LoadChain(
    session::SessionStore& store, const session::VersionInfo& base,
    const imaging::EncodedImage& base_image, const imaging::ModelCapabilities& model,
    const std::string& prompt, int reference_images, std::vector<int64_t>* versions,
    std::string* note) {
  ChainLimits limits;
  limits.max_turns = options_.chain_turns;
  limits.model = &model;
  limits.backend = backend_.Name();
  limits.prompt_bytes = prompt.size();
  limits.reference_images = reference_images;
  const VersionLookup lookup = [&](int64_t version) {
    return store.GetVersion(base.session_id, version);
  };
  ASSIGN_OR_RETURN(ChainPlan plan, PlanChain(base, limits, lookup));
  auto read = [&](const session::VersionInfo& v) -> Result<imaging::EncodedImage> {
    if (v.sha256 == base.sha256) return base_image;  // the edited image: read already
    ASSIGN_OR_RETURN(std::string bytes, store.ReadImage(v));
    return imaging::EncodedImage{std::move(bytes), v.mime_type};
  };
  std::vector<imaging::ChainTurn> turns;
  for (const PlannedTurn& planned : plan.turns) {
    imaging::ChainTurn turn;
    turn.user_text = planned.version.prompt;
    turn.replay = planned.record.replay;
    ASSIGN_OR_RETURN(turn.image, read(planned.version));
    if (planned.user_image) {
      ASSIGN_OR_RETURN(turn.user_image, read(*planned.user_image));
    }
    versions->push_back(planned.version.version);
    turns.push_back(std::move(turn));
  }
  *note = ChainNote(turns.size(), *versions, plan.stopped);
  return turns;
}

Result<session::NewVersion> ImageTools::BackendVersion(
    imaging::BackendImage image, const std::string& operation, const std::string& prompt,
    std::optional<int64_t> parent, const std::string& model, std::string details) {
  auto info = imaging::ReadImageInfo(image.bytes, options_.limits);
  if (!info.ok()) {
    return Error(ErrorCode::kInternal, "the " + backend_.Name() +
                                           " backend returned bytes that are not a usable image (" +
                                           info.error().message + "); nothing was committed");
  }
  session::NewVersion nv;
  nv.bytes = std::move(image.bytes);
  nv.mime_type = imaging::MimeTypeOf(info->format);
  nv.file_extension = imaging::FileExtensionOf(info->format);
  nv.width = info->width;
  nv.height = info->height;
  nv.operation = operation;
  nv.prompt = prompt;
  nv.parent = parent;
  nv.backend = backend_.Name();
  nv.model = model;
  nv.details = std::move(details);
  return nv;
}

Result<std::vector<session::VersionInfo>> ImageTools::CommitWhilePreparing(
    std::unique_ptr<session::EditTurn>& turn, const std::vector<session::NewVersion>& versions,
    const std::optional<session::IdempotencyRecord>& key, InlineMode mode,
    std::optional<PreparedImage>* prepared) const {
  // Building the block (a preview, or megabytes of base64) only reads the bytes, so it overlaps
  // the commit's write and fsyncs. The turn goes as soon as the commit is done: the next call
  // in this session's line need not wait for our result to be built.
  const session::NewVersion& last = versions.back();
  ImagePreparation preparation(mode, last.bytes, last.mime_type, options_.preview, options_.limits);
  auto committed = turn->CommitVersions(versions, key);
  turn.reset();
  std::optional<PreparedImage> image = preparation.Take();
  if (committed.ok()) *prepared = std::move(image);
  return committed;
}

Result<session::NewVersion> ImageTools::ImportVersion(const imaging::EncodedImage& image) const {
  ASSIGN_OR_RETURN(imaging::ImageInfo info, imaging::ReadImageInfo(image.bytes, options_.limits));
  session::NewVersion nv;
  nv.bytes = image.bytes;
  nv.mime_type = imaging::MimeTypeOf(info.format);
  nv.file_extension = imaging::FileExtensionOf(info.format);
  nv.width = info.width;
  nv.height = info.height;
  nv.operation = "import";
  nv.prompt = "";
  nv.backend = backend_.Name();
  nv.model = backend_.Model();
  return nv;
}

std::string ImageTools::MissingVersionText(session::SessionStore& store,
                                           const std::string& session_id, int64_t version) const {
  auto snapshot = store.ReadSession(session_id, std::nullopt, /*include_history=*/true);
  if (!snapshot.ok())
    return "session '" + session_id + "' has no version " + std::to_string(version);
  const int64_t last = snapshot->last_issued_version;
  std::string kept = snapshot->history.empty()
                         ? "it has no images now"
                         : "its versions now are " +
                               std::to_string(snapshot->history.front().version) + " to " +
                               std::to_string(snapshot->history.back().version);
  if (version > last) {
    return "session '" + session_id + "' has no version " + std::to_string(version) +
           " (the newest ever made is " + std::to_string(last) + "; " + kept + ")";
  }
  std::string why = "reset_session without to_version deletes every version";
  if (options_.max_versions > 0) {
    why = "this server keeps the last " + std::to_string(options_.max_versions) +
          " versions of a session and deletes older ones as new ones are saved, and " + why;
  }
  return "version " + std::to_string(version) + " of session '" + session_id +
         "' no longer exists: " + why + "; " + kept;
}

Result<session::VersionInfo> ImageTools::StoredVersion(session::SessionStore& store,
                                                       const std::string& session_id,
                                                       int64_t version) {
  auto info = store.GetVersion(session_id, version);
  if (!info.ok() && info.error().code == ErrorCode::kNotFound) {
    return Error(ErrorCode::kNotFound, MissingVersionText(store, session_id, version));
  }
  return info;
}

ImageTools::SaveReport ImageTools::SaveCopy(const std::optional<SavePlan>& plan,
                                            const session::VersionInfo& version,
                                            std::string_view bytes) const {
  SaveReport report;
  if (!plan) return report;
  auto saved = saves_.Save(*plan, version.session_id, version.version, bytes);
  if (saved.ok()) {
    report.fields = SavedFields(*saved);
    report.line = SavedLine(*saved);
    return report;
  }
  const std::string number = std::to_string(version.version);
  LogFailure("saving a copy of " + VersionUri(version.session_id, version.version), saved.error());
  report.fields["save_error"] = saved.error().message;
  report.line = "\nThe copy was NOT saved: " + saved.error().message + ". Version " + number +
                " is committed all the same (path above); to try again, call get_image with "
                "version " +
                number + " and save_to.";
  return report;
}

Result<SavedCopy> ImageTools::SaveStored(session::SessionStore& store, const SavePlan& plan,
                                         const session::VersionInfo& version) const {
  ASSIGN_OR_RETURN(std::string bytes, store.ReadImage(version));
  auto saved = saves_.Save(plan, version.session_id, version.version, bytes);
  if (!saved.ok()) {
    return WithContext(saved.error(),
                       "the copy of version " + std::to_string(version.version) + " was not saved");
  }
  return saved;
}

void ImageTools::AnnounceChange(const std::string& principal, const std::string& session_id,
                                bool new_session) {
  if (notifier_ == nullptr) return;
  notifier_->ResourceUpdated(ManifestUri(session_id), principal);
  if (new_session) notifier_->ResourceListChanged(principal);
}

mcp::ToolResult ImageTools::VersionResult(session::SessionStore& store, const std::string& summary,
                                          const session::VersionInfo& version, InlineMode mode,
                                          Json extra_structured,
                                          std::optional<PreparedImage> prepared,
                                          bool history_in_text) const {
  ResultParts parts;
  parts.summary = summary + BackendNote(options_.backend_note);
  parts.history_in_text = history_in_text;
  parts.structured = VersionStructuredContent(version, kResultPromptBytes);
  for (auto& [key, value] : extra_structured.items()) parts.structured[key] = value;
  parts.link_uri = VersionUri(version.session_id, version.version);
  parts.link_name = version.session_id + " v" + std::to_string(version.version);
  parts.link_mime_type = version.mime_type;
  std::string bytes;
  if (prepared) {
    parts.prepared = std::move(prepared);
  } else if (mode != InlineMode::kNone) {
    auto read = store.ReadImage(version);
    if (!read.ok()) {
      LogFailure("reading " + VersionUri(version.session_id, version.version), read.error());
      return mcp::ToolResult::ErrorText(read.error().message);
    }
    bytes = std::move(*read);
    parts.image = ImageAttachment{mode, &bytes, version.mime_type};
  }
  return BuildToolResult(std::move(parts), options_.preview, options_.limits);
}

ResultParts ImageTools::EmptySessionParts(const std::string& session_id,
                                          const std::string& summary) const {
  ResultParts parts;
  parts.summary = summary + BackendNote(options_.backend_note);
  parts.structured = EmptySessionStructuredContent(session_id, backend_.Name(), backend_.Model());
  parts.link_uri = ManifestUri(session_id);
  parts.link_name = session_id;
  parts.link_mime_type = "application/json";
  return parts;
}

Result<ImageTools::CostCheck> ImageTools::CheckCost(
    session::SessionStore& store, const std::string& tool, const std::string& session_id,
    const GenerationArgs& args, const imaging::ModelCapabilities& model,
    const imaging::CostInputs& inputs, bool budgets) {
  CostCheck check;
  check.estimate = imaging::EstimateCost(model, inputs);
  if (!args.estimate_only.value_or(false)) {
    Status capped = CheckCostCap(check.estimate, args.max_cost_usd);
    Result<CallSpend> held =
        capped.ok() ? CallSpend::Hold(store, budgets ? options_.budgets : session::SpendBudgets{},
                                      session_id, check.estimate, options_.backend_deadline)
                    : Result<CallSpend>(capped.error());
    if (!held.ok()) {
      const std::string_view budget =
          capped.ok() ? session::RefusedBudget(held.error()) : std::string_view("max_cost");
      if (!budget.empty() && options_.metrics != nullptr) {
        options_.metrics->RecordBudgetRefusal(budget);
      }
      return held.error();
    }
    check.spend = std::move(*held);
    return check;
  }
  const Json extra = {{"estimate_only", true}, {"estimate", imaging::CostJson(check.estimate)}};
  const std::string summary = "Estimate only, nothing was sent or saved: this " + tool +
                              " call on " + model.id + " may cost up to " +
                              FormatUsd(check.estimate.usd) +
                              " (worst case: " + imaging::CostLine(check.estimate) + ").";
  Result<session::VersionInfo> current = store.GetVersion(session_id, std::nullopt);
  if (current.ok()) {
    check.estimate_only = VersionResult(store, summary, *current, InlineMode::kNone, extra);
  } else {
    ResultParts parts = EmptySessionParts(session_id, summary);
    parts.structured.update(extra);
    check.estimate_only = BuildToolResult(std::move(parts), options_.preview, options_.limits);
  }
  return check;
}

// --- generate_image ------------------------------------------------------------------------------

mcp::ToolResult ImageTools::GenerateImage(const GenerateImageArgs& args,
                                          mcp::ToolCallContext& ctx) {
  return Answer("generate_image", Generate(args, ctx));
}

mcp::ToolResult ImageTools::CommitBatchAnswer(const GenerateImageArgs& args,
                                              mcp::ToolCallContext& ctx,
                                              const Result<imaging::BackendImage>& answer) {
  GenerateImageArgs committed = args;
  committed.delivery.reset();  // the answer is here: committed as an immediate call's would be
  mcp::ToolResult result = Answer("generate_image", Generate(committed, ctx, &answer));
  if (options_.audit != nullptr) {  // the write happens now, in the poller, not in the call
    AuditCall(*options_.audit, "generate_image", SessionNamed(args), "", ctx, result);
  }
  return result;
}

Result<mcp::ToolResult> ImageTools::Generate(const GenerateImageArgs& args,
                                             mcp::ToolCallContext& ctx,
                                             const Result<imaging::BackendImage>* batch_answer) {
  if (args.Batch()) return HandOffToBatch(args, ctx);
  // Everything the call reads and writes is its caller's (sessions per person).
  CallerStore scoped(store_, ctx.caller());
  session::SessionStore& store = scoped.get();
  const std::string id = args.SessionFor().value_or("img-" + RandomHex(6));
  const std::optional<session::IdempotencyRecord> key = KeyOf("generate_image", args, &ctx);
  const bool saving = args.save.save_to.has_value();
  // A repeat of a recorded call is answered first: it neither checks nor writes a copy.
  ASSIGN_OR_RETURN(auto early, Repeat(store, "generate_image", id, key, args.inline_mode, saving));
  if (early) return std::move(*early);
  // Where a copy goes is checked before anything else: a bad save_to generates nothing.
  ASSIGN_OR_RETURN(const std::optional<SavePlan> save,
                   saves_.Plan(args.save, SaveSource::kNewVersion));
  imaging::GenerationOptions options = args.Options();
  std::vector<std::string> ignored;
  // Before anything else: nothing is sent otherwise.
  ASSIGN_OR_RETURN(const imaging::ModelCapabilities* model, ChooseModel(options, &ignored));
  options.model = model->id;
  // A batch answer was paid for already: the budgets were checked when its call was made.
  ASSIGN_OR_RETURN(CostCheck cost,
                   CheckCost(store, "generate_image", id, args.generation, *model,
                             args.CostInputs(options), /*budgets=*/batch_answer == nullptr));
  if (cost.estimate_only) return std::move(*cost.estimate_only);
  // Held until the call ends: what its images, backend call and result hold (call_memory.h).
  std::vector<imaging::EncodedImage> references;
  ASSIGN_OR_RETURN(const ByteBudget::Lease memory,
                   memory_.LeaseGeneration(args, options, &references));

  CallProgress progress(ctx);
  ASSIGN_OR_RETURN(std::unique_ptr<session::EditTurn> turn, TakeTurn(store, id, ctx, progress));
  ASSIGN_OR_RETURN(auto repeat, Repeat(store, "generate_image", id, key, args.inline_mode, saving));
  if (repeat) return std::move(*repeat);
  cost.spend.Renew(options_.backend_deadline);  // however long the call waited for its turn
  const bool new_session = !turn->Current().has_value() && turn->LastIssuedVersion() == 0;

  imaging::GenerateRequest request;
  request.prompt = args.prompt;
  request.options = options;
  request.references = std::move(references);
  auto image = batch_answer != nullptr
                   ? *batch_answer
                   : RunBackend("generating with " + backend_.Name() + " (" + options.model + ")",
                                ctx, [&](const imaging::CallContext& c) {
                                  return backend_.Generate(request, c);
                                });
  if (!image.ok()) return Appended(image.error(), BackendNote(options_.backend_note));
  const Json params = ParamsJson(options, options.model);
  Json extra = AnswerExtra(*image, options.search, params);
  Json cost_json;
  const std::string cost_line =
      ChargeAnswer(*model, *image, cost.spend, options_.metrics, &extra, &cost_json);
  const std::string lines =
      AnswerLines(*image, options.search) + cost_line + IgnoredNote(backend_, ignored);
  std::string details =
      MakeVersionDetails(params, *image, TurnRecord{false, image->replay}, cost_json);
  ASSIGN_OR_RETURN(session::NewVersion nv,
                   BackendVersion(std::move(*image), "generate", args.prompt, std::nullopt,
                                  options.model, std::move(details)));
  std::vector<session::NewVersion> to_commit;
  to_commit.push_back(std::move(nv));
  std::optional<PreparedImage> prepared;
  RETURN_IF_ERROR(ctx.TaskStillWanted());  // inside the turn: a cancelled task commits nothing
  ASSIGN_OR_RETURN(std::vector<session::VersionInfo> committed,
                   CommitWhilePreparing(turn, to_commit, key, args.inline_mode, &prepared));
  const session::VersionInfo& version = committed.back();
  AnnounceChange(session::PrincipalOf(store), version.session_id, new_session);
  SaveReport saved = SaveCopy(save, version, to_commit.back().bytes);
  extra.update(saved.fields);
  return VersionResult(store,
                       "Generated version " + std::to_string(version.version) + " of session '" +
                           id + "' (" + DescribeVersion(version) + ") with the " + version.backend +
                           " backend (" + version.model + ")." + lines + saved.line,
                       version, args.inline_mode, std::move(extra), std::move(prepared));
}

// --- edit_image: checks, then in the session's turn resolve the base, run the edit, commit -------

// What an edit checked before it waits for its turn.
struct ImageTools::CheckedEdit {
  imaging::GenerationOptions options;  // with the model chosen
  const imaging::ModelCapabilities* model = nullptr;
  std::vector<std::string> ignored;               // parameters the model has no use for
  std::optional<imaging::EncodedImage> outside;   // the `image` argument, decoded whole
  std::vector<imaging::EncodedImage> references;  // `reference_images`, decoded whole
  std::optional<SavePlan> save;                   // where a copy goes (`save_to`)
  // Held until the call ends: its images, request, backend call and result (call_memory.h).
  ByteBudget::Lease memory;
  CostCheck cost;  // the estimate and its hold in the spend ledger
};

// The version an edit is made from, read in the session's turn.
struct ImageTools::EditBase {
  // For an outside image: the version its import will be (a chain stops at it, an import).
  session::VersionInfo info;
  imaging::EncodedImage image;
  // An outside image's version. It and the edit made from it are one operation: the image
  // becomes version N+1 and the edit N+2, committed together once the backend has answered, or
  // neither.
  std::optional<session::NewVersion> import;
  bool new_session = false;  // no version was ever issued in the session

  // Said after an error once the backend has been asked.
  std::string NothingSaved() const {
    return import ? "; nothing was saved, not even the given image" : "";
  }
};

// What the backend answered to an edit, and the earlier turns it was sent with.
struct ImageTools::EditAnswer {
  imaging::BackendImage image;
  bool chained = false;           // the request replayed earlier turns
  std::vector<int64_t> replayed;  // their versions
  std::string chain_note;         // for context "chain": what was replayed, or why nothing was
};

namespace {

// An outside image, as the version its import will be in `session_id`.
session::VersionInfo ImportedBase(const std::string& session_id, int64_t version,
                                  const session::NewVersion& import) {
  session::VersionInfo base;
  base.session_id = session_id;
  base.version = version;
  base.operation = import.operation;
  base.mime_type = import.mime_type;
  base.width = import.width;
  base.height = import.height;
  base.backend = import.backend;
  base.model = import.model;
  return base;
}

}  // namespace

mcp::ToolResult ImageTools::EditImage(const EditImageArgs& args, mcp::ToolCallContext& ctx) {
  return Answer("edit_image", Edit(args, ctx));
}

Result<mcp::ToolResult> ImageTools::Edit(const EditImageArgs& args, mcp::ToolCallContext& ctx) {
  // Everything the call reads and writes is its caller's (sessions per person).
  CallerStore scoped(store_, ctx.caller());
  session::SessionStore& store = scoped.get();
  const std::optional<session::IdempotencyRecord> key = KeyOf("edit_image", args, &ctx);
  const bool saving = args.save.save_to.has_value();
  ASSIGN_OR_RETURN(auto early,
                   Repeat(store, "edit_image", args.session_id, key, args.inline_mode, saving));
  if (early) return std::move(*early);
  ASSIGN_OR_RETURN(CheckedEdit checked, CheckEdit(store, args));
  if (checked.cost.estimate_only) return std::move(*checked.cost.estimate_only);
  CallProgress progress(ctx);
  ASSIGN_OR_RETURN(std::unique_ptr<session::EditTurn> turn,
                   TakeTurn(store, args.session_id, ctx, progress));
  ASSIGN_OR_RETURN(auto repeat,
                   Repeat(store, "edit_image", args.session_id, key, args.inline_mode, saving));
  if (repeat) return std::move(*repeat);
  checked.cost.spend.Renew(options_.backend_deadline);  // however long it waited for its turn
  ASSIGN_OR_RETURN(EditBase base, ResolveEditBase(store, args, *turn, std::move(checked.outside)));
  // In the turn: the base is read, and the edit's size and the chain's follow from it.
  RETURN_IF_ERROR(memory_.ExtendForEdit(checked.memory, args, {base.info.width, base.info.height},
                                        base.import ? 0 : base.image.bytes.size(),
                                        checked.options));
  imaging::EditRequest request;
  request.prompt = args.prompt;
  request.options = checked.options;
  request.options.chain = false;  // the backend sees the turns themselves (request.chain)
  request.base = std::move(base.image);
  request.references = std::move(checked.references);
  ASSIGN_OR_RETURN(EditAnswer answer,
                   RunEdit(store, args, *checked.model, base, std::move(request), ctx));
  RETURN_IF_ERROR(ctx.TaskStillWanted());  // inside the turn: a cancelled task commits nothing
  return CommitEdit(store, args, checked, std::move(base), std::move(answer), key, turn);
}

Result<ImageTools::CheckedEdit> ImageTools::CheckEdit(session::SessionStore& store,
                                                      const EditImageArgs& args) {
  CheckedEdit checked;
  checked.options = args.generation.Options();
  checked.options.chain = args.chain();
  checked.options.input_images = 1 + static_cast<int>(args.reference_images.size());
  // Before anything else: nothing is sent otherwise.
  ASSIGN_OR_RETURN(checked.model, ChooseModel(checked.options, &checked.ignored));
  checked.options.model = checked.model->id;
  // The worst case: a chain replays up to --chain-turns turns, each an instruction and its image.
  const int turns = args.chain() ? std::max(0, options_.chain_turns) : 0;
  ASSIGN_OR_RETURN(checked.cost,
                   CheckCost(store, "edit_image", args.session_id, args.generation, *checked.model,
                             {.text_bytes = args.prompt.size() * (1 + turns),
                              .input_images = checked.options.input_images + turns,
                              .image_size = checked.options.image_size,
                              .thinking = checked.options.thinking,
                              .search = checked.options.search}));
  if (checked.cost.estimate_only) return checked;
  // Everything that can be checked is checked before the call waits for its turn, commits or
  // calls the backend: the model and its options, where a copy goes, the instruction (the local
  // backend knows its vocabulary), then the images, decoded whole.
  ASSIGN_OR_RETURN(checked.save, saves_.Plan(args.save, SaveSource::kNewVersion));
  if (Status s = backend_.CheckEditInstruction(args.prompt); !s.ok()) {
    return Appended(s.error(), BackendNote(options_.backend_note));
  }
  std::vector<const ImageInputArg*> inputs;
  if (args.image) inputs.push_back(&*args.image);
  for (const ImageInputArg& reference : args.reference_images) inputs.push_back(&reference);
  // The work is leased in the turn, once the base's size is known (ExtendForEdit).
  ASSIGN_OR_RETURN(checked.memory, memory_.Lease("this edit_image call", inputs, 0));
  if (args.image) {
    ASSIGN_OR_RETURN(checked.outside, inputs_.Resolve(*args.image, "image"));
  }
  ASSIGN_OR_RETURN(checked.references,
                   inputs_.ResolveList(args.reference_images, "reference_images"));
  return checked;
}

Result<ImageTools::EditBase> ImageTools::ResolveEditBase(
    session::SessionStore& store, const EditImageArgs& args, const session::EditTurn& turn,
    std::optional<imaging::EncodedImage> outside) {
  const std::string& session_id = args.session_id;
  const auto current = turn.Current();
  const int64_t current_version = current ? current->version : 0;
  if (args.expected_version && *args.expected_version != current_version) {
    return Error(ErrorCode::kConflict,
                 "version conflict: session '" + session_id + "' is at version " +
                     std::to_string(current_version) + ", but expected_version is " +
                     std::to_string(*args.expected_version) +
                     "; nothing changed. Call get_image to see the current image, then retry "
                     "with expected_version " +
                     std::to_string(current_version) + ".");
  }
  EditBase base;
  base.new_session = !current && turn.LastIssuedVersion() == 0;
  if (outside) {
    ASSIGN_OR_RETURN(base.import, ImportVersion(*outside));
    base.info = ImportedBase(session_id, turn.LastIssuedVersion() + 1, *base.import);
    base.image = std::move(*outside);
    return base;
  }
  if (args.from_version) {
    ASSIGN_OR_RETURN(base.info, StoredVersion(store, session_id, *args.from_version));
  } else if (current) {
    base.info = *current;
  } else {
    return Error(ErrorCode::kFailedPrecondition,
                 "session '" + session_id +
                     "' has no image yet: call generate_image with this session_id first, or "
                     "pass 'image' to edit an outside image");
  }
  ASSIGN_OR_RETURN(base.image.bytes, store.ReadImage(base.info));
  base.image.mime_type = base.info.mime_type;
  return base;
}

Result<ImageTools::EditAnswer> ImageTools::RunEdit(session::SessionStore& store,
                                                   const EditImageArgs& args,
                                                   const imaging::ModelCapabilities& model,
                                                   const EditBase& base,
                                                   imaging::EditRequest request,
                                                   mcp::ToolCallContext& ctx) {
  EditAnswer answer;
  // Context "chain": the turns that led to the base version, replayed before the instruction.
  if (args.chain() && model.chain == imaging::Support::kYes) {
    ASSIGN_OR_RETURN(request.chain, LoadChain(store, base.info, request.base, model, args.prompt,
                                              static_cast<int>(request.references.size()),
                                              &answer.replayed, &answer.chain_note));
  }
  answer.chained = !request.chain.empty();
  auto image =
      RunBackend("editing version " + std::to_string(base.info.version) + " with " +
                     backend_.Name() + " (" + request.options.model + ")",
                 ctx, [&](const imaging::CallContext& c) { return backend_.Edit(request, c); });
  if (!image.ok())
    return Appended(image.error(), base.NothingSaved() + BackendNote(options_.backend_note));
  answer.image = std::move(*image);
  return answer;
}

Result<mcp::ToolResult> ImageTools::CommitEdit(session::SessionStore& store,
                                               const EditImageArgs& args, CheckedEdit& checked,
                                               EditBase base, EditAnswer answer,
                                               const std::optional<session::IdempotencyRecord>& key,
                                               std::unique_ptr<session::EditTurn>& turn) {
  const imaging::GenerationOptions& options = checked.options;
  const std::string nothing_saved = base.NothingSaved();
  const std::string imported_note = base.import ? " (the given image was saved as version " +
                                                      std::to_string(base.info.version) + ")"
                                                : "";
  Json params = ParamsJson(options, options.model);
  if (args.context) params["context"] = *args.context;
  if (!answer.replayed.empty()) params["replayed_versions"] = answer.replayed;
  imaging::BackendImage& image = answer.image;
  Json extra = AnswerExtra(image, options.search, params);
  Json cost_json;
  const std::string cost_line =
      ChargeAnswer(*checked.model, image, checked.cost.spend, options_.metrics, &extra, &cost_json);
  const std::string lines = AnswerLines(image, options.search) + cost_line + answer.chain_note +
                            IgnoredNote(backend_, checked.ignored);
  // With a chain the instruction went alone (the image was the previous answer); otherwise the
  // base version's image went with it.
  std::string details =
      MakeVersionDetails(params, image, TurnRecord{!answer.chained, image.replay}, cost_json);
  auto nv = BackendVersion(std::move(image), "edit", args.prompt, base.info.version, options.model,
                           std::move(details));
  if (!nv.ok()) return Appended(nv.error(), nothing_saved);
  std::vector<session::NewVersion> to_commit;
  if (base.import) to_commit.push_back(std::move(*base.import));
  to_commit.push_back(std::move(*nv));
  std::optional<PreparedImage> prepared;
  auto committed = CommitWhilePreparing(turn, to_commit, key, args.inline_mode, &prepared);
  if (!committed.ok()) return Appended(committed.error(), nothing_saved);
  const session::VersionInfo& version = committed->back();
  AnnounceChange(session::PrincipalOf(store), version.session_id,
                 base.new_session);  // once: the import and the edit together
  SaveReport saved = SaveCopy(checked.save, version, to_commit.back().bytes);
  extra.update(saved.fields);
  return VersionResult(store,
                       "Edited session '" + args.session_id + "': version " +
                           std::to_string(version.version) + " made from version " +
                           std::to_string(base.info.version) + imported_note + " (" +
                           DescribeVersion(version) + ") with the " + version.backend +
                           " backend (" + version.model + ")." + lines + saved.line,
                       version, args.inline_mode, std::move(extra), std::move(prepared));
}

// --- get_image -----------------------------------------------------------------------------------

namespace {

// A page of the history: the newest `history_limit` entries below `history_before`, oldest
// first, and where the next older page starts. A result stays small however long the session is.
Json HistoryPage(const std::vector<session::VersionInfo>& all, const GetImageArgs& args) {
  const int64_t limit = args.history_limit.value_or(kDefaultHistoryLimit);
  size_t end = all.size();
  if (args.history_before) {
    end = 0;
    while (end < all.size() && all[end].version < *args.history_before) ++end;
  }
  const size_t begin = end > static_cast<size_t>(limit) ? end - static_cast<size_t>(limit) : 0;
  Json history = Json::array();
  for (size_t i = begin; i < end; ++i) {
    history.push_back(HistoryEntryJson(all[i], kHistoryPromptBytes));
  }
  Json fields = Json::object();
  fields["history"] = std::move(history);
  fields["history_total"] = all.size();
  if (begin > 0) fields["history_more_before"] = all[begin].version;
  return fields;
}

// How to read older versions, when the page left some out; "" otherwise.
std::string PagingNote(const Json& history_fields, size_t total) {
  if (!history_fields.contains("history_more_before")) return "";
  return " History: the newest " + std::to_string(history_fields["history"].size()) + " of " +
         std::to_string(total) + " versions; pass history_before=" +
         std::to_string(history_fields["history_more_before"].get<int64_t>()) + " for older ones.";
}

}  // namespace

mcp::ToolResult ImageTools::GetImage(const GetImageArgs& args, mcp::ToolCallContext& ctx) {
  return Answer("get_image", Get(args, ctx));
}

Result<mcp::ToolResult> ImageTools::Get(const GetImageArgs& args, mcp::ToolCallContext& ctx) {
  // Everything the call reads and writes is its caller's (sessions per person).
  CallerStore scoped(store_, ctx.caller());
  session::SessionStore& store = scoped.get();
  const std::string& session_id = args.session_id;
  ASSIGN_OR_RETURN(const std::optional<SavePlan> save,
                   saves_.Plan(args.save, SaveSource::kStoredVersion));
  // One snapshot: a commit by another call or process lands wholly before or after this read.
  const bool with_history = args.include_history.value_or(true);
  auto snapshot = store.ReadSession(session_id, args.version, with_history);
  if (!snapshot.ok()) {
    if (snapshot.error().code != ErrorCode::kNotFound) return snapshot.error();
    return Error(ErrorCode::kNotFound, "unknown session '" + session_id +
                                           "'; sessions are created by generate_image (or "
                                           "edit_image with an image)");
  }
  const bool history_in_text = !ReadsStructuredContent(ctx);
  Json history_fields = with_history ? HistoryPage(snapshot->history, args) : Json::object();
  // Every call the session paid for, reverted and cleared versions included.
  history_fields["session_cost_usd"] = snapshot->cost_usd;
  if (options_.gallery_links != nullptr) {
    if (auto link = options_.gallery_links->LinkFor(ctx.caller(), session_id)) {
      history_fields["gallery_url"] = std::move(*link);
    }
  }
  if (!snapshot->version.has_value()) {
    if (args.version.has_value()) {
      return Error(ErrorCode::kNotFound, MissingVersionText(store, session_id, *args.version));
    }
    if (save) {
      return Error(ErrorCode::kFailedPrecondition,
                   "session '" + session_id + "' has no image (it was reset): nothing to save");
    }
    ResultParts parts =
        EmptySessionParts(session_id, "Session '" + session_id + "' has no image (it was reset).");
    for (auto& [key, value] : history_fields.items()) parts.structured[key] = value;
    parts.history_in_text = history_in_text;
    return BuildToolResult(std::move(parts), options_.preview, options_.limits);
  }
  const session::VersionInfo& version = *snapshot->version;
  const std::string paging = PagingNote(history_fields, snapshot->history.size());
  std::string saved_line;
  if (save) {
    ASSIGN_OR_RETURN(SavedCopy saved, SaveStored(store, *save, version));
    history_fields.update(SavedFields(saved));
    saved_line = SavedLine(saved);
  }
  return VersionResult(
      store,
      "Session '" + session_id + "' version " + std::to_string(version.version) + " (" +
          DescribeVersion(version) + ", " + version.operation + ")." + paging + saved_line,
      version, args.inline_mode, std::move(history_fields), std::nullopt, history_in_text);
}

// --- reset_session -------------------------------------------------------------------------------

mcp::ToolResult ImageTools::ResetSession(const ResetSessionArgs& args, mcp::ToolCallContext& ctx) {
  return Answer("reset_session", Reset(args, ctx));
}

Result<mcp::ToolResult> ImageTools::Reset(const ResetSessionArgs& args, mcp::ToolCallContext& ctx) {
  // Everything the call reads and writes is its caller's (sessions per person).
  CallerStore scoped(store_, ctx.caller());
  session::SessionStore& store = scoped.get();
  const std::string& session_id = args.session_id;
  const std::optional<session::IdempotencyRecord> key = KeyOf("reset_session", args);
  ASSIGN_OR_RETURN(auto early,
                   Repeat(store, "reset_session", session_id, key, InlineMode::kPreview, false));
  if (early) return std::move(*early);
  CallProgress progress(ctx);
  ASSIGN_OR_RETURN(std::unique_ptr<session::EditTurn> turn,
                   TakeTurn(store, session_id, ctx, progress));
  ASSIGN_OR_RETURN(auto repeat,
                   Repeat(store, "reset_session", session_id, key, InlineMode::kPreview, false));
  if (repeat) return std::move(*repeat);
  // Checked in the turn: a generate sent just before this reset has committed by now.
  if (!store.SessionExists(session_id)) {
    return Error(ErrorCode::kNotFound, "unknown session '" + session_id + "'");
  }
  if (args.to_version.has_value()) return RevertTo(store, session_id, *args.to_version, key, turn);
  return ClearImages(store, session_id, key, turn);
}

Result<mcp::ToolResult> ImageTools::RevertTo(session::SessionStore& store,
                                             const std::string& session_id, int64_t to_version,
                                             const std::optional<session::IdempotencyRecord>& key,
                                             std::unique_ptr<session::EditTurn>& turn) {
  Result<session::VersionInfo> old = StoredVersion(store, session_id, to_version);
  if (!old.ok() && old.error().code == ErrorCode::kNotFound) {
    return Error(ErrorCode::kNotFound,
                 "cannot revert: " + old.error().message + "; nothing changed");
  }
  RETURN_IF_ERROR(old);
  session::NewVersion nv;
  ASSIGN_OR_RETURN(nv.bytes, store.ReadImage(*old));
  nv.mime_type = old->mime_type;
  nv.file_extension = old->path.extension().string();
  nv.width = old->width;
  nv.height = old->height;
  nv.operation = "revert";
  nv.prompt = "revert to version " + std::to_string(old->version);
  nv.parent = old->version;
  nv.backend = old->backend;
  nv.model = old->model;
  Result<session::VersionInfo> committed = turn->Commit(nv, key);
  turn.reset();
  ASSIGN_OR_RETURN(session::VersionInfo version, std::move(committed));
  AnnounceChange(session::PrincipalOf(store), version.session_id, false);
  return VersionResult(store,
                       "Reverted session '" + session_id + "' to version " +
                           std::to_string(old->version) + ", saved as new version " +
                           std::to_string(version.version) + ".",
                       version, InlineMode::kPreview);
}

Result<mcp::ToolResult> ImageTools::ClearImages(
    session::SessionStore& store, const std::string& session_id,
    const std::optional<session::IdempotencyRecord>& key,
    std::unique_ptr<session::EditTurn>& turn) {
  const int64_t next = turn->LastIssuedVersion() + 1;
  RETURN_IF_ERROR(turn->Clear(key));
  turn.reset();
  AnnounceChange(session::PrincipalOf(store), session_id, false);
  ResultParts parts =
      EmptySessionParts(session_id, "Cleared session '" + session_id +
                                        "': it has no image now; the next version will be " +
                                        std::to_string(next) + " (numbers are never reused).");
  parts.structured["cleared"] = true;
  parts.structured["next_version"] = next;
  return BuildToolResult(std::move(parts), options_.preview, options_.limits);
}

}  // namespace imgmcp::tools
