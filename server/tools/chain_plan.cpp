#include "server/tools/chain_plan.h"

#include <algorithm>

namespace imgmcp::tools {
namespace {

// Room kept for the new turn's text and the model's own overhead (role markers, config).
constexpr int64_t kReservedTokens = 1024;

std::string V(int64_t version) { return "version " + std::to_string(version); }

}  // namespace

int64_t EstimatedTurnTokens(const PlannedTurn& turn, const imaging::ModelCapabilities& model) {
  const int64_t images = 1 + (turn.user_image ? 1 : 0);
  const int64_t text = static_cast<int64_t>(turn.version.prompt.size() + turn.record.replay.size());
  return text / 4 + 1 + images * model.input_image_tokens;
}

namespace {

// `v`'s parent, where the walk goes on; empty when `v` has none, or when it is gone (then
// `stopped` says so: "version 3 <why_gone> no longer exists"). Errors: what `lookup` returns
// other than kNotFound.
Result<std::optional<session::VersionInfo>> ParentOf(const session::VersionInfo& v,
                                                     const std::string& why_gone,
                                                     const VersionLookup& lookup,
                                                     std::string* stopped) {
  if (!v.parent) return std::optional<session::VersionInfo>();
  Result<session::VersionInfo> p = lookup(*v.parent);
  if (p.ok()) return std::optional<session::VersionInfo>(std::move(*p));
  if (p.error().code != ErrorCode::kNotFound) return p.error();
  *stopped = V(*v.parent) + " " + why_gone + " no longer exists (cleared or pruned)";
  return std::optional<session::VersionInfo>();
}

// Why `v` (not a revert), whose turn is `record`, cannot be replayed to `limits.model`; "" when
// it can.
std::string WhyNotATurn(const session::VersionInfo& v, const std::optional<TurnRecord>& record,
                        const ChainLimits& limits) {
  if (v.operation == "import") return V(v.version) + " is an imported image";
  if (!record || v.backend != limits.backend) {
    return V(v.version) + " has no answer to replay (made by the " +
           (v.backend.empty() ? std::string("unknown") : v.backend) + " backend)";
  }
  if (v.model != limits.model->id) {
    return V(v.version) + " was made by " + v.model +
           " (a model's signatures are valid only for that model)";
  }
  if (record->user_image && !v.parent) {
    return V(v.version) + " lacks the image its instruction was sent with";
  }
  return "";
}

// One version of the walk: the turn it is, if it is one, and the version the walk goes on to.
struct WalkStep {
  std::optional<PlannedTurn> turn;
  std::optional<session::VersionInfo> next;  // none: the walk ends here
};

// The step at `v`. Where the walk ends, `stopped` says why.
Result<WalkStep> StepAt(session::VersionInfo v, const ChainLimits& limits,
                        const VersionLookup& lookup, std::string* stopped) {
  WalkStep step;
  if (v.operation == "revert") {  // the same image as its parent: that version's turns led to it
    ASSIGN_OR_RETURN(step.next,
                     ParentOf(v, "that " + V(v.version) + " reverts to", lookup, stopped));
    return step;
  }
  std::optional<TurnRecord> record = TurnOf(v.details);
  if (std::string why = WhyNotATurn(v, record, limits); !why.empty()) {
    *stopped = std::move(why);
    return step;
  }
  PlannedTurn turn;
  turn.record = std::move(*record);
  if (turn.record.user_image) {
    ASSIGN_OR_RETURN(
        step.next,
        ParentOf(v, "whose image went with " + V(v.version) + "'s instruction", lookup, stopped));
    if (!step.next) return step;  // that image is gone: this turn cannot be replayed either
    turn.user_image = *step.next;
  } else {
    ASSIGN_OR_RETURN(step.next, ParentOf(v, "before " + V(v.version), lookup, stopped));
  }
  if (!v.parent && stopped->empty()) *stopped = V(v.version) + " starts the session";
  turn.version = std::move(v);
  step.turn = std::move(turn);
  return step;
}

// The turns that led to `base`, newest first, at most `limits.max_turns`.
Result<std::vector<PlannedTurn>> WalkBack(const session::VersionInfo& base,
                                          const ChainLimits& limits, const VersionLookup& lookup,
                                          std::string* stopped) {
  std::vector<PlannedTurn> newest_first;
  // Parents always have smaller numbers, so the walk ends.
  std::optional<session::VersionInfo> at = base;
  while (at.has_value() && static_cast<int>(newest_first.size()) < limits.max_turns) {
    ASSIGN_OR_RETURN(WalkStep step, StepAt(std::move(*at), limits, lookup, stopped));
    if (step.turn) newest_first.push_back(std::move(*step.turn));
    at = std::move(step.next);
  }
  return newest_first;
}

// How many of the newest turns fit the model's input images and input tokens beside the new
// turn's instruction and reference images; when some do not, `stopped` says which limit.
size_t TurnsThatFit(const std::vector<PlannedTurn>& newest_first, const ChainLimits& limits,
                    std::string* stopped) {
  const imaging::ModelCapabilities& model = *limits.model;
  const int image_budget = model.max_input_images - limits.reference_images;
  const int64_t token_budget =
      model.input_token_limit <= 0
          ? INT64_MAX
          : model.input_token_limit - static_cast<int64_t>(limits.prompt_bytes / 4) -
                int64_t{limits.reference_images} * model.input_image_tokens - kReservedTokens;
  int images = 0;
  int64_t tokens = 0;
  size_t kept = 0;
  for (; kept < newest_first.size(); ++kept) {
    const PlannedTurn& t = newest_first[kept];
    const int turn_images = 1 + (t.user_image ? 1 : 0);
    const int64_t turn_tokens = EstimatedTurnTokens(t, model);
    if (images + turn_images > image_budget) {
      *stopped = "model " + model.id + " takes at most " + std::to_string(model.max_input_images) +
                 " input images";
      break;
    }
    if (tokens + turn_tokens > token_budget) {
      *stopped = "model " + model.id + "'s input limit of " +
                 std::to_string(model.input_token_limit) + " tokens";
      break;
    }
    images += turn_images;
    tokens += turn_tokens;
  }
  return kept;
}

}  // namespace

Result<ChainPlan> PlanChain(const session::VersionInfo& base, const ChainLimits& limits,
                            const VersionLookup& lookup) {
  ChainPlan plan;
  if (limits.model == nullptr || limits.max_turns <= 0) return plan;
  ASSIGN_OR_RETURN(std::vector<PlannedTurn> newest_first,
                   WalkBack(base, limits, lookup, &plan.stopped));
  // Keep the newest turns that fit the model's input images and input tokens.
  newest_first.resize(TurnsThatFit(newest_first, limits, &plan.stopped));
  if (newest_first.size() == static_cast<size_t>(limits.max_turns) && plan.stopped.empty()) {
    plan.stopped = "the server's --chain-turns " + std::to_string(limits.max_turns);
  }
  plan.turns.assign(std::make_move_iterator(newest_first.rbegin()),
                    std::make_move_iterator(newest_first.rend()));
  return plan;
}

}  // namespace imgmcp::tools
