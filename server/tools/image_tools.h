// The four image tools (README.md, "Tools"): generate_image, edit_image, get_image, reset_session.
// They sit on the SessionStore (ordering, durability) and an ImageBackend (pixels); they know
// nothing about stdio or HTTP.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/byte_budget.h"
#include "common/slot_limiter.h"
#include "common/timer_thread.h"
#include "imaging/codec.h"
#include "imaging/image_backend.h"
#include "mcp/audit_trail.h"
#include "mcp/gallery_links.h"
#include "mcp/resource.h"
#include "mcp/tool.h"
#include "server/tools/call_memory.h"
#include "server/tools/call_spend.h"
#include "server/tools/image_input.h"
#include "server/tools/save_target.h"
#include "server/tools/tool_args.h"
#include "server/tools/tool_results.h"
#include "session/session_store.h"

namespace imgmcp::tools {

// The one default for --max-backend-calls.
inline constexpr int kDefaultMaxConcurrentBackendCalls = 32;
// The one default for --max-inflight-mb: room for one call with fourteen 12 MB references.
inline constexpr int kDefaultMaxInflightMb = 512;

// The one default for --chain-turns.
inline constexpr int kDefaultChainTurns = 4;

struct ImageToolsOptions {
  imaging::PreviewOptions preview;  // inline "preview" budget
  imaging::DecodeLimits limits;
  // Appended to every summary, e.g. why the offline backend is in use. Empty for none.
  std::string backend_note;
  std::chrono::milliseconds heartbeat_interval{1000};  // progress while the backend runs
  // The thread that sends the heartbeats (one for every call); nullptr: the tools start their own.
  // Must outlive the tools.
  TimerThread* timers = nullptr;
  std::chrono::seconds backend_deadline{600};  // overall limit of one backend call
  size_t max_prompt_bytes = 100 * 1024;
  // Backend calls running at once across all sessions (<= 0: no cap); the others wait for a slot.
  int max_concurrent_backend_calls = kDefaultMaxConcurrentBackendCalls;
  // Memory the image calls in flight may hold together (--max-inflight-mb; 0 = no limit): the
  // images they read, decode and make, the requests they build and the answers they get (see
  // call_memory.h). A call that does not fit is refused.
  size_t max_inflight_bytes = size_t{kDefaultMaxInflightMb} << 20;
  // Earlier turns a `context: "chain"` edit replays at most (--chain-turns).
  int chain_turns = kDefaultChainTurns;
  // The store's retention (StoreOptions), stated in tool descriptions and in errors about
  // versions it deleted.
  int max_versions = 100;  // 0 = all
  int idle_days = 0;       // 0 = never
  // Where save_to may write (wiring: the working directory and --allow-write roots, never the
  // data dir). By default nowhere.
  SaveOptions save;
  // Budgets a paid call's estimate is held against (--budget-usd-per-day, --budget-usd-per-session;
  // 0 = none).
  session::SpendBudgets budgets;
  // Where spend, tokens and budget refusals are counted; nullptr: nowhere. Must outlive the tools.
  metrics::Metrics* metrics = nullptr;
  // Where the calls that write are recorded (the audit trail); nullptr: nowhere. Must outlive the
  // tools.
  mcp::AuditTrail* audit = nullptr;
  // Makes the gallery_url of get_image (mcp/gallery_links.h); nullptr: none. Must outlive the
  // tools.
  mcp::GalleryLinks* gallery_links = nullptr;
  // Why generate_image cannot take delivery "batch" here; "" when it can (the Gemini API backend,
  // whose batch poller runs: server/app/batch_delivery.h).
  std::string batch_refusal =
      "delivery \"batch\" needs the Gemini API backend (--backend gemini with GEMINI_API_KEY)";
  std::chrono::milliseconds batch_window{10'000};  // --batch-window, said in a batch task's status
};

class ImageTools {
 public:
  // All references must outlive this object. `notifier` may be null.
  // Also listens to the store for sessions changed by other replicas, to tell subscribers.
  ImageTools(session::SessionStore& store, imaging::ImageBackend& backend,
             const ImageInputResolver& inputs, mcp::ResourceNotifier* notifier,
             ImageToolsOptions options);
  ~ImageTools();
  ImageTools(const ImageTools&) = delete;
  ImageTools& operator=(const ImageTools&) = delete;

  // The four tools with typed arguments, for McpServer::RegisterTool. The tools that take a
  // session's turn reserve it when the call arrives (on the reading thread, in arrival order), so
  // turns follow arrival order, not thread start order.
  std::vector<mcp::ToolSpec> Tools();

  // What the arguments are parsed with (limits from the options and the input resolver).
  const ArgumentOptions& argument_options() const { return argument_options_; }

  // The tool handlers. A failure is logged and answered as an isError result naming the tool.
  mcp::ToolResult GenerateImage(const GenerateImageArgs& args, mcp::ToolCallContext& ctx);
  mcp::ToolResult EditImage(const EditImageArgs& args, mcp::ToolCallContext& ctx);
  mcp::ToolResult GetImage(const GetImageArgs& args, mcp::ToolCallContext& ctx);
  mcp::ToolResult ResetSession(const ResetSessionArgs& args, mcp::ToolCallContext& ctx);
  // generate_image with delivery "batch", its Gemini batch job's answer (or that request's error)
  // here: committed as an immediate call commits its backend's — the session's turn, the version,
  // its cost at the answer's price_factor, the result — with the task's key, so a cancelled task
  // commits nothing and a retried commit finds the first (ctx.TaskId() is the task's id). The
  // budgets are not asked again: they were when the call was made, and the job is paid for.
  mcp::ToolResult CommitBatchAnswer(const GenerateImageArgs& args, mcp::ToolCallContext& ctx,
                                    const Result<imaging::BackendImage>& answer);

 private:
  // What the handlers run: the tool's result, or the Error it failed with. `batch_answer`: the
  // answer to commit instead of calling the backend (CommitBatchAnswer).
  Result<mcp::ToolResult> Generate(const GenerateImageArgs& args, mcp::ToolCallContext& ctx,
                                   const Result<imaging::BackendImage>* batch_answer = nullptr);
  // generate_image with delivery "batch": checks what the batch poller will need, then hands the
  // task off (it stays working; the poller submits, follows and commits it).
  Result<mcp::ToolResult> HandOffToBatch(const GenerateImageArgs& args, mcp::ToolCallContext& ctx);
  Result<mcp::ToolResult> Edit(const EditImageArgs& args, mcp::ToolCallContext& ctx);
  Result<mcp::ToolResult> Get(const GetImageArgs& args, mcp::ToolCallContext& ctx);
  Result<mcp::ToolResult> Reset(const ResetSessionArgs& args, mcp::ToolCallContext& ctx);

  // edit_image in steps: checks before the session's turn, then in the turn resolve the base
  // version, run the backend, commit.
  struct CheckedEdit;
  struct EditBase;
  struct EditAnswer;
  // The model and its options, the instruction (the local backend knows its vocabulary), then
  // the images, decoded whole: all before the call waits for its turn.
  Result<CheckedEdit> CheckEdit(session::SessionStore& store, const EditImageArgs& args);
  // The version edited: the outside image (as the import it will be), from_version, or the
  // current one; after the expected_version check.
  Result<EditBase> ResolveEditBase(session::SessionStore& store, const EditImageArgs& args,
                                   const session::EditTurn& turn,
                                   std::optional<imaging::EncodedImage> outside);
  // The backend call for `request` (with the earlier turns for context "chain"), in a backend
  // slot with its progress.
  Result<EditAnswer> RunEdit(session::SessionStore& store, const EditImageArgs& args,
                             const imaging::ModelCapabilities& model, const EditBase& base,
                             imaging::EditRequest request, mcp::ToolCallContext& ctx);
  // Commits the import, if any, and the edit together; releases the turn; makes the result.
  Result<mcp::ToolResult> CommitEdit(session::SessionStore& store, const EditImageArgs& args,
                                     CheckedEdit& checked, EditBase base, EditAnswer answer,
                                     const std::optional<session::IdempotencyRecord>& key,
                                     std::unique_ptr<session::EditTurn>& turn);
  // reset_session's two forms, in the session's turn, which they release; `key` is recorded with
  // the revert's version or the clear.
  Result<mcp::ToolResult> RevertTo(session::SessionStore& store, const std::string& session_id,
                                   int64_t to_version,
                                   const std::optional<session::IdempotencyRecord>& key,
                                   std::unique_ptr<session::EditTurn>& turn);
  Result<mcp::ToolResult> ClearImages(session::SessionStore& store, const std::string& session_id,
                                      const std::optional<session::IdempotencyRecord>& key,
                                      std::unique_ptr<session::EditTurn>& turn);

  // Exactly-once writes (docs/generation.md, "Exactly-once writes"). The call's key and the
  // digest of its arguments; nullopt without an idempotency_key.
  template <typename Args>
  // The call's idempotency_key, else the key of the task it runs as (ToolCallContext::TaskId).
  std::optional<session::IdempotencyRecord> KeyOf(const std::string& tool, const Args& args,
                                                  const mcp::ToolCallContext* ctx = nullptr) const;
  // When `key` is already recorded in `session_id`: the recorded call's result again (a repeat),
  // or kInvalidArgument when the recorded call had other arguments. nullopt when there is no key
  // or it is not recorded: the call goes ahead. Called before the turn (a repeat answered early)
  // and again in it (final: a first call that was still running has committed by then).
  // `saving`: the repeat asked for a copy, which it does not write (the text says so).
  Result<std::optional<mcp::ToolResult>> Repeat(
      session::SessionStore& store, const std::string& tool, const std::string& session_id,
      const std::optional<session::IdempotencyRecord>& key, InlineMode mode, bool saving);

  template <typename Args>
  mcp::TypedTool<Args> Bind(mcp::ToolDefinition&& definition,
                            mcp::ToolResult (ImageTools::*handler)(const Args&,
                                                                   mcp::ToolCallContext&));
  // Draws the call's place in `caller`'s `session_id`'s line (nullptr when there is none to draw).
  std::unique_ptr<mcp::CallReservation> ReserveSessionTurn(
      const mcp::Caller& caller, const std::optional<std::string>& session_id);

  // The cost checks before any request (README.md, "What it costs"): the call's worst-case
  // estimate against max_cost_usd; for estimate_only, the result to answer (nothing is called or
  // committed); else the hold in the spend ledger, refused when it would cross a budget.
  struct CostCheck {
    imaging::CallCost estimate;
    std::optional<mcp::ToolResult> estimate_only;
    CallSpend spend;
  };
  // `budgets` false: the hold is not checked against the budgets (a batch answer, paid for).
  Result<CostCheck> CheckCost(session::SessionStore& store, const std::string& tool,
                              const std::string& session_id, const GenerationArgs& args,
                              const imaging::ModelCapabilities& model,
                              const imaging::CostInputs& inputs, bool budgets = true);

  // Runs the backend in a backend slot with a progress heartbeat; checks cancellation after.
  template <typename Fn>
  Result<imaging::BackendImage> RunBackend(const std::string& what, mcp::ToolCallContext& ctx,
                                           Fn&& call);
  // The backend's row for `options` (imaging::CheckGenerationOptions), before any backend call;
  // `ignored` gets the given parameters the model has no use for.
  Result<const imaging::ModelCapabilities*> ChooseModel(const imaging::GenerationOptions& options,
                                                        std::vector<std::string>* ignored) const;
  // The earlier turns a chain edit of `base` replays, with their images read; `note` says what
  // was replayed, or why nothing was.
  Result<std::vector<imaging::ChainTurn>> LoadChain(session::SessionStore& store,
                                                    const session::VersionInfo& base,
                                                    const imaging::EncodedImage& base_image,
                                                    const imaging::ModelCapabilities& model,
                                                    const std::string& prompt, int reference_images,
                                                    std::vector<int64_t>* versions,
                                                    std::string* note);
  // The version to commit for what the backend returned (made by `model`, with `details`);
  // kInternal when it is not an image.
  Result<session::NewVersion> BackendVersion(imaging::BackendImage image,
                                             const std::string& operation,
                                             const std::string& prompt,
                                             std::optional<int64_t> parent,
                                             const std::string& model, std::string details);
  // Commits `versions` all together or not at all (an import and the edit made from it) while
  // the result's image block, for the last one, is built on another thread; releases the turn
  // right after the commit. `prepared` receives the block when the commit succeeded.
  Result<std::vector<session::VersionInfo>> CommitWhilePreparing(
      std::unique_ptr<session::EditTurn>& turn, const std::vector<session::NewVersion>& versions,
      const std::optional<session::IdempotencyRecord>& key, InlineMode mode,
      std::optional<PreparedImage>* prepared) const;
  // The version an outside image (edit_image's `image`) is saved as.
  Result<session::NewVersion> ImportVersion(const imaging::EncodedImage& image) const;
  // Why `version` of `session_id` cannot be read (it was never issued, or was deleted by a reset
  // or by retention), for a tool's error.
  std::string MissingVersionText(session::SessionStore& store, const std::string& session_id,
                                 int64_t version) const;
  // `version` of `session_id`; kNotFound says why it cannot be read (MissingVersionText).
  Result<session::VersionInfo> StoredVersion(session::SessionStore& store,
                                             const std::string& session_id, int64_t version);
  // `prepared`, when given, is the image block already built from the version's bytes.
  // `history_in_text`: see ResultParts.
  mcp::ToolResult VersionResult(session::SessionStore& store, const std::string& summary,
                                const session::VersionInfo& version, InlineMode mode,
                                Json extra_structured = Json::object(),
                                std::optional<PreparedImage> prepared = std::nullopt,
                                bool history_in_text = true) const;
  // The result parts of a session without an image (`summary` and the note): its manifest is
  // the link.
  ResultParts EmptySessionParts(const std::string& session_id, const std::string& summary) const;
  // After a commit: the copy `plan` asks for (nothing without a plan), and how it went as
  // structuredContent fields (saved_to, saved_bytes, saved_format, or save_error) and a line of
  // text. A failure is told, never returned: the version stays committed.
  struct SaveReport {
    Json fields = Json::object();
    std::string line;
  };
  SaveReport SaveCopy(const std::optional<SavePlan>& plan, const session::VersionInfo& version,
                      std::string_view bytes) const;
  // get_image's copy of a stored version: nothing else happens in that call, so a failure is its
  // error.
  Result<SavedCopy> SaveStored(session::SessionStore& store, const SavePlan& plan,
                               const session::VersionInfo& version) const;
  // Tells subscribers that a session changed (here or on another replica): its manifest, and the
  // resource list when the session is new.
  void AnnounceChange(const std::string& principal, const std::string& session_id,
                      bool new_session);

  session::SessionStore& store_;
  imaging::ImageBackend& backend_;
  const ImageInputResolver& inputs_;
  mcp::ResourceNotifier* notifier_;
  ImageToolsOptions options_;
  std::unique_ptr<TimerThread> own_timers_;  // when options_.timers is not given
  TimerThread& timers_;                      // the calls' progress heartbeats
  ArgumentOptions argument_options_;
  SlotLimiter backend_slots_;  // caps concurrent backend calls (max_concurrent_backend_calls)
  MemoryLeases memory_;        // caps the bytes image calls hold (max_inflight_bytes)
  SaveTargets saves_;          // where save_to may write (options_.save)
};

// Tool definitions (names, titles, descriptions written for a model, schemas, annotations).
mcp::ToolDefinition GenerateImageDefinition(const ArgumentOptions& options);
mcp::ToolDefinition EditImageDefinition(const ArgumentOptions& options);
mcp::ToolDefinition GetImageDefinition(const ArgumentOptions& options);
mcp::ToolDefinition ResetSessionDefinition(const ArgumentOptions& options);

}  // namespace imgmcp::tools
