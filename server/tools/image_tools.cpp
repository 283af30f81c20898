#include "server/tools/image_tools.h"

#include "common/log.h"
#include "common/random.h"
#include "server/tools/arguments.h"
#include "server/tools/call_progress.h"
#include "server/tools/chain_plan.h"
#include "server/tools/tool_results.h"
#include "server/tools/uris.h"
#include "server/tools/version_details.h"

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

// Clients of 2025-06-18 and later read structuredContent; older ones only the text.
bool ReadsStructuredContent(const mcp::ToolCallContext& ctx) {
  return ctx.ProtocolVersion() >= "2025-06-18";
}

std::string Describe(const session::VersionInfo& v) {
  return std::to_string(v.width) + "x" + std::to_string(v.height) + " " + v.mime_type + ", " +
         HumanBytes(v.bytes);
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
      backend_slots_(options_.max_concurrent_backend_calls) {
  argument_options_.max_prompt_bytes = options_.max_prompt_bytes;
  argument_options_.max_versions = options_.max_versions;
  argument_options_.idle_days = options_.idle_days;
  inputs_.ApplyLimits(argument_options_);
  OfferModels(backend_.Models(), argument_options_);
  store_.SetChangeListener([this](const session::StoreChange& change) {
    AnnounceChange(change.session_id, change.new_session);
  });
}

ImageTools::~ImageTools() { store_.SetChangeListener(nullptr); }

template <typename Args>
mcp::TypedTool<Args> ImageTools::Bind(
    mcp::ToolDefinition definition,
    mcp::ToolResult (ImageTools::*handler)(const Args&, mcp::ToolCallContext&)) {
  mcp::TypedTool<Args> tool;
  tool.definition = std::move(definition);
  tool.parse = [this, name = tool.definition.name](const Json& arguments) {
    auto parsed = ParseArguments<Args>(arguments, argument_options_);
    if (!parsed.ok()) LogFailure(name, parsed.error());
    return parsed;
  };
  tool.handler = [this, handler](const Args& args, mcp::ToolCallContext& ctx) {
    return (this->*handler)(args, ctx);
  };
  return tool;
}

std::vector<mcp::ToolSpec> ImageTools::Tools() {
  const ArgumentOptions& o = argument_options_;
  auto generate = Bind(GenerateImageDefinition(o), &ImageTools::GenerateImage);
  generate.admission = [this](const GenerateImageArgs& a) {
    return ReserveSessionTurn(a.session_id);
  };
  auto edit = Bind(EditImageDefinition(o), &ImageTools::EditImage);
  edit.admission = [this](const EditImageArgs& a) { return ReserveSessionTurn(a.session_id); };
  auto reset = Bind(ResetSessionDefinition(o), &ImageTools::ResetSession);
  reset.admission = [this](const ResetSessionArgs& a) { return ReserveSessionTurn(a.session_id); };
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
    const std::optional<std::string>& session_id) {
  if (!session_id) return nullptr;  // minted by the handler: a new session, no line to join
  auto turn = store_.ReserveTurn(*session_id);
  if (!turn.ok()) return nullptr;
  return std::make_unique<SessionTurnReservation>(std::move(*turn));
}

std::string ImageTools::Note() const {
  return options_.backend_note.empty() ? "" : " [" + options_.backend_note + "]";
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
  Result<imaging::BackendImage> out = Error(ErrorCode::kInternal, "the backend did not run");
  backend_slots_.Run(ctx.Cancellation(), [&] {
    ProgressHeartbeat heartbeat(progress, what, options_.heartbeat_interval);
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
  if (Status s = imaging::CheckGenerationOptions(backend_.Models(), options, &model, ignored);
      !s.ok()) {
    return s.error();
  }
  return model;
}

std::string ImageTools::IgnoredNote(const std::vector<std::string>& ignored) const {
  if (ignored.empty()) return "";
  return "\nIgnored: " + imaging::JoinList(ignored, " and ") + " (no meaning for the " +
         backend_.Name() + " backend" +
         (backend_.Name() == "local" ? ", which works offline" : "") + ").";
}

Result<std::vector<imaging::ChainTurn>> ImageTools::LoadChain(
    const session::VersionInfo& base, const imaging::EncodedImage& base_image,
    const imaging::ModelCapabilities& model, const std::string& prompt, int reference_images,
    std::vector<int64_t>* versions, std::string* note) {
  ChainLimits limits;
  limits.max_turns = options_.chain_turns;
  limits.model = &model;
  limits.backend = backend_.Name();
  limits.prompt_bytes = prompt.size();
  limits.reference_images = reference_images;
  auto plan = PlanChain(
      base, limits, [&](int64_t version) { return store_.GetVersion(base.session_id, version); });
  if (!plan.ok()) return plan.error();
  auto read = [&](const session::VersionInfo& v) -> Result<imaging::EncodedImage> {
    if (v.sha256 == base.sha256) return base_image;  // the edited image: read already
    auto bytes = store_.ReadImage(v);
    if (!bytes.ok()) return bytes.error();
    return imaging::EncodedImage{std::move(*bytes), v.mime_type};
  };
  std::vector<imaging::ChainTurn> turns;
  for (const PlannedTurn& planned : plan->turns) {
    imaging::ChainTurn turn;
    turn.user_text = planned.version.prompt;
    turn.replay = planned.record.replay;
    auto image = read(planned.version);
    if (!image.ok()) return image.error();
    turn.image = std::move(*image);
    if (planned.user_image) {
      auto sent = read(*planned.user_image);
      if (!sent.ok()) return sent.error();
      turn.user_image = std::move(*sent);
    }
    versions->push_back(planned.version.version);
    turns.push_back(std::move(turn));
  }
  std::string list;
  for (int64_t v : *versions) list += (list.empty() ? "" : ", ") + std::to_string(v);
  if (turns.empty()) {
    *note = "\nContext: chain found no earlier turn to replay (" + plan->stopped +
            "); the image was sent with the instruction instead.";
  } else {
    *note = "\nContext: chain replayed the turn" + std::string(turns.size() == 1 ? "" : "s") +
            " of version" + (turns.size() == 1 ? " " : "s ") + list +
            " (nothing older: " + plan->stopped + ").";
  }
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
    InlineMode mode, std::optional<PreparedImage>* prepared) {
  // Building the block (a preview, or megabytes of base64) only reads the bytes, so it overlaps
  // the commit's write and fsyncs. The turn goes as soon as the commit is done: the next call
  // in this session's line need not wait for our result to be built.
  const session::NewVersion& last = versions.back();
  ImagePreparation preparation(mode, last.bytes, last.mime_type, options_.preview, options_.limits);
  auto committed = turn->CommitVersions(versions);
  turn.reset();
  std::optional<PreparedImage> image = preparation.Take();
  if (committed.ok()) *prepared = std::move(image);
  return committed;
}

Result<session::NewVersion> ImageTools::ImportVersion(const imaging::EncodedImage& image) const {
  auto info = imaging::ReadImageInfo(image.bytes, options_.limits);
  if (!info.ok()) return info.error();
  session::NewVersion nv;
  nv.bytes = image.bytes;
  nv.mime_type = imaging::MimeTypeOf(info->format);
  nv.file_extension = imaging::FileExtensionOf(info->format);
  nv.width = info->width;
  nv.height = info->height;
  nv.operation = "import";
  nv.prompt = "";
  nv.backend = backend_.Name();
  nv.model = backend_.Model();
  return nv;
}

std::string ImageTools::MissingVersionText(const std::string& session_id, int64_t version) {
  auto snapshot = store_.ReadSession(session_id, std::nullopt, /*include_history=*/true);
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

void ImageTools::AnnounceChange(const std::string& session_id, bool new_session) {
  if (notifier_ == nullptr) return;
  notifier_->ResourceUpdated(ManifestUri(session_id));
  if (new_session) notifier_->ResourceListChanged();
}

mcp::ToolResult ImageTools::VersionResult(const std::string& summary,
                                          const session::VersionInfo& version, InlineMode mode,
                                          Json extra_structured,
                                          std::optional<PreparedImage> prepared,
                                          bool history_in_text) {
  ResultParts parts;
  parts.summary = summary + Note();
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
    auto read = store_.ReadImage(version);
    if (!read.ok()) {
      LogFailure("reading " + VersionUri(version.session_id, version.version), read.error());
      return mcp::ToolResult::ErrorText(read.error().message);
    }
    bytes = std::move(*read);
    parts.image = ImageAttachment{mode, &bytes, version.mime_type};
  }
  return BuildToolResult(std::move(parts), options_.preview, options_.limits);
}

mcp::ToolResult ImageTools::GenerateImage(const GenerateImageArgs& args,
                                          mcp::ToolCallContext& ctx) {
  const std::string tool = "generate_image";
  imaging::GenerationOptions options = args.generation.Options();
  options.aspect_ratio = args.aspect_ratio.value_or("");
  options.input_images = static_cast<int>(args.reference_images.size());
  std::vector<std::string> ignored;
  auto model = ChooseModel(options, &ignored);  // before anything else: nothing is sent otherwise
  if (!model.ok()) return Fail(tool, model.error());
  options.model = (*model)->id;
  const std::string id = args.session_id.value_or("img-" + RandomHex(6));
  auto references = inputs_.ResolveList(args.reference_images, "reference_images");
  if (!references.ok()) return Fail(tool, references.error());

  CallProgress progress(ctx);
  auto turn = TakeTurn(store_, id, ctx, progress);
  if (!turn.ok()) return Fail(tool, turn.error());
  const bool new_session = !(*turn)->Current().has_value() && (*turn)->LastIssuedVersion() == 0;

  imaging::GenerateRequest request;
  request.prompt = args.prompt;
  request.options = options;
  request.references = std::move(*references);
  auto image =
      RunBackend("generating with " + backend_.Name() + " (" + options.model + ")", ctx,
                 [&](const imaging::CallContext& c) { return backend_.Generate(request, c); });
  if (!image.ok()) return Fail(tool, Error(image.error().code, image.error().message + Note()));
  const Json params = ParamsJson(options, options.model);
  Json extra = AnswerFields(*image, options.search);
  if (!image->text.empty()) extra["text"] = image->text;  // the older name of model_text
  extra["params"] = params;
  const std::string lines = AnswerLines(*image, options.search) + IgnoredNote(ignored);
  std::string details = MakeVersionDetails(params, *image, TurnRecord{false, image->replay});
  auto nv = BackendVersion(std::move(*image), "generate", args.prompt, std::nullopt, options.model,
                           std::move(details));
  if (!nv.ok()) return Fail(tool, nv.error());
  const InlineMode mode = args.inline_mode;
  std::optional<PreparedImage> prepared;
  auto committed = CommitWhilePreparing(*turn, {std::move(*nv)}, mode, &prepared);
  if (!committed.ok()) return Fail(tool, committed.error());
  const session::VersionInfo* version = &committed->back();
  AnnounceChange(version->session_id, new_session);
  return VersionResult("Generated version " + std::to_string(version->version) + " of session '" +
                           id + "' (" + Describe(*version) + ") with the " + version->backend +
                           " backend (" + version->model + ")." + lines,
                       *version, mode, std::move(extra), std::move(prepared));
}

mcp::ToolResult ImageTools::EditImage(const EditImageArgs& args, mcp::ToolCallContext& ctx) {
  const std::string tool = "edit_image";
  const std::string& session_id = args.session_id;
  imaging::GenerationOptions options = args.generation.Options();
  options.chain = args.chain();
  options.input_images = 1 + static_cast<int>(args.reference_images.size());
  std::vector<std::string> ignored;
  auto model = ChooseModel(options, &ignored);  // before anything else: nothing is sent otherwise
  if (!model.ok()) return Fail(tool, model.error());
  options.model = (*model)->id;
  // Everything that can be checked is checked before the call waits for its turn, commits or
  // calls the backend: the model and its options, the instruction (the local backend knows its
  // vocabulary), then the images, decoded whole.
  if (Status s = backend_.CheckEditInstruction(args.prompt); !s.ok()) {
    return Fail(tool, Error(s.error().code, s.error().message + Note()));
  }
  std::optional<imaging::EncodedImage> outside;
  if (args.image) {
    auto resolved = inputs_.Resolve(*args.image, "image");
    if (!resolved.ok()) return Fail(tool, resolved.error());
    outside = std::move(*resolved);
  }
  auto references = inputs_.ResolveList(args.reference_images, "reference_images");
  if (!references.ok()) return Fail(tool, references.error());

  CallProgress progress(ctx);
  auto turn = TakeTurn(store_, session_id, ctx, progress);
  if (!turn.ok()) return Fail(tool, turn.error());
  const auto current = (*turn)->Current();
  const int64_t current_version = current ? current->version : 0;
  const bool new_session = !current && (*turn)->LastIssuedVersion() == 0;
  if (args.expected_version && *args.expected_version != current_version) {
    return Fail(tool, Error(ErrorCode::kConflict,
                            "version conflict: session '" + session_id + "' is at version " +
                                std::to_string(current_version) + ", but expected_version is " +
                                std::to_string(*args.expected_version) +
                                "; nothing changed. Call get_image to see the current image, then "
                                "retry with expected_version " +
                                std::to_string(current_version) + "."));
  }

  session::VersionInfo base_info;
  imaging::EditRequest request;
  request.prompt = args.prompt;
  request.options = options;
  request.options.chain = false;  // the backend sees the turns themselves (request.chain)
  request.references = std::move(*references);
  std::string imported_note;
  // An outside image and the edit made from it are one operation: the image becomes version N+1
  // and the edit N+2, committed together once the backend has answered, or neither.
  std::vector<session::NewVersion> to_commit;
  if (outside) {
    auto import = ImportVersion(*outside);
    if (!import.ok()) return Fail(tool, import.error());
    // The base is the version the import will be; a chain stops at it (an imported image).
    base_info.session_id = session_id;
    base_info.version = (*turn)->LastIssuedVersion() + 1;
    base_info.operation = import->operation;
    base_info.mime_type = import->mime_type;
    base_info.width = import->width;
    base_info.height = import->height;
    base_info.backend = import->backend;
    base_info.model = import->model;
    to_commit.push_back(std::move(*import));
    request.base = std::move(*outside);
    imported_note =
        " (the given image was saved as version " + std::to_string(base_info.version) + ")";
  } else {
    if (args.from_version) {
      auto info = store_.GetVersion(session_id, *args.from_version);
      if (!info.ok()) {
        if (info.error().code != ErrorCode::kNotFound) return Fail(tool, info.error());
        return Fail(
            tool, Error(ErrorCode::kNotFound, MissingVersionText(session_id, *args.from_version)));
      }
      base_info = *info;
    } else if (current) {
      base_info = *current;
    } else {
      return Fail(tool, Error(ErrorCode::kFailedPrecondition,
                              "session '" + session_id +
                                  "' has no image yet: call generate_image with this session_id "
                                  "first, or pass 'image' to edit an outside image"));
    }
    auto bytes = store_.ReadImage(base_info);
    if (!bytes.ok()) return Fail(tool, bytes.error());
    request.base.bytes = std::move(*bytes);
    request.base.mime_type = base_info.mime_type;
  }
  const char* nothing_saved = outside ? "; nothing was saved, not even the given image" : "";

  // Context "chain": the turns that led to the base version, replayed before the instruction.
  std::vector<int64_t> replayed;
  std::string chain_note;
  if (args.chain() && (*model)->chain == imaging::Support::kYes) {
    auto chain = LoadChain(base_info, request.base, **model, args.prompt,
                           static_cast<int>(request.references.size()), &replayed, &chain_note);
    if (!chain.ok()) return Fail(tool, chain.error());
    request.chain = std::move(*chain);
  }

  auto image =
      RunBackend("editing version " + std::to_string(base_info.version) + " with " +
                     backend_.Name() + " (" + options.model + ")",
                 ctx, [&](const imaging::CallContext& c) { return backend_.Edit(request, c); });
  if (!image.ok()) {
    return Fail(tool, Error(image.error().code, image.error().message + nothing_saved + Note()));
  }
  Json params = ParamsJson(options, options.model);
  if (args.context) params["context"] = *args.context;
  if (!replayed.empty()) params["replayed_versions"] = replayed;
  Json extra = AnswerFields(*image, options.search);
  if (!image->text.empty()) extra["text"] = image->text;  // the older name of model_text
  extra["params"] = params;
  const std::string lines = AnswerLines(*image, options.search) + chain_note + IgnoredNote(ignored);
  // With a chain the instruction went alone (the image was the previous answer); otherwise the
  // base version's image went with it.
  std::string details =
      MakeVersionDetails(params, *image, TurnRecord{request.chain.empty(), image->replay});
  auto nv = BackendVersion(std::move(*image), "edit", args.prompt, base_info.version, options.model,
                           std::move(details));
  if (!nv.ok()) return Fail(tool, Error(nv.error().code, nv.error().message + nothing_saved));
  to_commit.push_back(std::move(*nv));
  const InlineMode mode = args.inline_mode;
  std::optional<PreparedImage> prepared;
  auto committed = CommitWhilePreparing(*turn, to_commit, mode, &prepared);
  if (!committed.ok()) {
    return Fail(tool, Error(committed.error().code, committed.error().message + nothing_saved));
  }
  const session::VersionInfo* version = &committed->back();
  AnnounceChange(version->session_id, new_session);  // once: the import and the edit together
  return VersionResult("Edited session '" + session_id + "': version " +
                           std::to_string(version->version) + " made from version " +
                           std::to_string(base_info.version) + imported_note + " (" +
                           Describe(*version) + ") with the " + version->backend + " backend (" +
                           version->model + ")." + lines,
                       *version, mode, std::move(extra), std::move(prepared));
}

mcp::ToolResult ImageTools::GetImage(const GetImageArgs& args, mcp::ToolCallContext& ctx) {
  const std::string tool = "get_image";
  const std::string& session_id = args.session_id;
  const std::optional<int64_t>& version_arg = args.version;

  // One snapshot: a commit by another call or process lands wholly before or after this read.
  const bool with_history = args.include_history.value_or(true);
  auto snapshot = store_.ReadSession(session_id, version_arg, with_history);
  const bool history_in_text = !ReadsStructuredContent(ctx);
  if (!snapshot.ok()) {
    if (snapshot.error().code != ErrorCode::kNotFound) return Fail(tool, snapshot.error());
    return Fail(tool, Error(ErrorCode::kNotFound,
                            "unknown session '" + session_id +
                                "'; sessions are created by generate_image (or edit_image with "
                                "an image)"));
  }
  // A page of the history: the newest `limit` entries below `history_before`, oldest first, and
  // where the next older page starts. A result stays small however long the session is.
  Json history_fields = Json::object();
  if (with_history) {
    const auto& all = snapshot->history;  // oldest first
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
    history_fields["history"] = std::move(history);
    history_fields["history_total"] = all.size();
    if (begin > 0) history_fields["history_more_before"] = all[begin].version;
  }
  if (!snapshot->version.has_value()) {
    if (version_arg.has_value()) {
      return Fail(tool, Error(ErrorCode::kNotFound, MissingVersionText(session_id, *version_arg)));
    }
    ResultParts parts;
    parts.summary = "Session '" + session_id + "' has no image (it was reset)." + Note();
    parts.structured = EmptySessionStructuredContent(session_id, backend_.Name(), backend_.Model());
    for (auto& [key, value] : history_fields.items()) parts.structured[key] = value;
    parts.history_in_text = history_in_text;
    parts.link_uri = ManifestUri(session_id);
    parts.link_name = session_id;
    parts.link_mime_type = "application/json";
    return BuildToolResult(std::move(parts), options_.preview, options_.limits);
  }
  const session::VersionInfo& version = *snapshot->version;
  std::string paging;
  if (history_fields.contains("history_more_before")) {
    paging = " History: the newest " + std::to_string(history_fields["history"].size()) + " of " +
             std::to_string(snapshot->history.size()) + " versions; pass history_before=" +
             std::to_string(history_fields["history_more_before"].get<int64_t>()) +
             " for older ones.";
  }
  return VersionResult("Session '" + session_id + "' version " + std::to_string(version.version) +
                           " (" + Describe(version) + ", " + version.operation + ")." + paging,
                       version, args.inline_mode, std::move(history_fields), std::nullopt,
                       history_in_text);
}

mcp::ToolResult ImageTools::ResetSession(const ResetSessionArgs& args, mcp::ToolCallContext& ctx) {
  const std::string tool = "reset_session";
  const std::string& session_id = args.session_id;
  CallProgress progress(ctx);
  auto turn = TakeTurn(store_, session_id, ctx, progress);
  if (!turn.ok()) return Fail(tool, turn.error());
  // Checked in the turn: a generate sent just before this reset has committed by now.
  if (!store_.SessionExists(session_id)) {
    return Fail(tool, Error(ErrorCode::kNotFound, "unknown session '" + session_id + "'"));
  }

  if (args.to_version.has_value()) {
    auto old = store_.GetVersion(session_id, *args.to_version);
    if (!old.ok()) {
      if (old.error().code != ErrorCode::kNotFound) return Fail(tool, old.error());
      return Fail(tool, Error(ErrorCode::kNotFound,
                              "cannot revert: " + MissingVersionText(session_id, *args.to_version) +
                                  "; nothing changed"));
    }
    auto bytes = store_.ReadImage(*old);
    if (!bytes.ok()) return Fail(tool, bytes.error());
    session::NewVersion nv;
    nv.bytes = std::move(*bytes);
    nv.mime_type = old->mime_type;
    nv.file_extension = old->path.extension().string();
    nv.width = old->width;
    nv.height = old->height;
    nv.operation = "revert";
    nv.prompt = "revert to version " + std::to_string(old->version);
    nv.parent = old->version;
    nv.backend = old->backend;
    nv.model = old->model;
    auto version = (*turn)->Commit(nv);
    turn->reset();
    if (!version.ok()) return Fail(tool, version.error());
    AnnounceChange(version->session_id, false);
    return VersionResult("Reverted session '" + session_id + "' to version " +
                             std::to_string(old->version) + ", saved as new version " +
                             std::to_string(version->version) + ".",
                         *version, InlineMode::kPreview);
  }

  const int64_t next = (*turn)->LastIssuedVersion() + 1;
  if (Status s = (*turn)->Clear(); !s.ok()) return Fail(tool, s.error());
  turn->reset();
  AnnounceChange(session_id, false);
  ResultParts parts;
  parts.summary = "Cleared session '" + session_id +
                  "': it has no image now; the next version "
                  "will be " +
                  std::to_string(next) + " (numbers are never reused)." + Note();
  parts.structured = EmptySessionStructuredContent(session_id, backend_.Name(), backend_.Model());
  parts.structured["cleared"] = true;
  parts.structured["next_version"] = next;
  parts.link_uri = ManifestUri(session_id);
  parts.link_name = session_id;
  parts.link_mime_type = "application/json";
  return BuildToolResult(std::move(parts), options_.preview, options_.limits);
}

}  // namespace imgmcp::tools
