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

Result<ChainPlan> PlanChain(const session::VersionInfo& base, const ChainLimits& limits,
                            const VersionLookup& lookup) {
  ChainPlan plan;
  if (limits.model == nullptr || limits.max_turns <= 0) return plan;
  const imaging::ModelCapabilities& model = *limits.model;
  std::vector<PlannedTurn> newest_first;
  // Parents always have smaller numbers, so the walk ends.
  std::optional<session::VersionInfo> at = base;
  while (at.has_value() && static_cast<int>(newest_first.size()) < limits.max_turns) {
    const session::VersionInfo v = std::move(*at);
    at.reset();
    auto parent = [&](const std::string& why_gone) -> Status {
      if (!v.parent) return Status::Ok();
      Result<session::VersionInfo> p = lookup(*v.parent);
      if (p.ok()) {
        at = std::move(*p);
      } else if (p.error().code == ErrorCode::kNotFound) {
        plan.stopped = V(*v.parent) + " " + why_gone + " no longer exists (cleared or pruned)";
      } else {
        return p.error();
      }
      return Status::Ok();
    };
    if (v.operation == "revert") {  // the same image as its parent: that version's turns led to it
      RETURN_IF_ERROR(parent("that " + V(v.version) + " reverts to"));
      continue;
    }
    if (v.operation == "import") {
      plan.stopped = V(v.version) + " is an imported image";
      break;
    }
    std::optional<TurnRecord> record = TurnOf(v.details);
    if (!record || v.backend != limits.backend) {
      plan.stopped = V(v.version) + " has no answer to replay (made by the " +
                     (v.backend.empty() ? std::string("unknown") : v.backend) + " backend)";
      break;
    }
    if (v.model != model.id) {
      plan.stopped = V(v.version) + " was made by " + v.model +
                     " (a model's signatures are valid only for that model)";
      break;
    }
    PlannedTurn turn;
    turn.version = v;
    turn.record = std::move(*record);
    if (turn.record.user_image) {
      if (!v.parent) {
        plan.stopped = V(v.version) + " lacks the image its instruction was sent with";
        break;
      }
      if (Status s = parent("whose image went with " + V(v.version) + "'s instruction"); !s.ok())
        return s.error();
      if (!at) break;  // that image is gone: this turn cannot be replayed either
      turn.user_image = *at;
    } else if (Status s = parent("before " + V(v.version)); !s.ok()) {
      return s.error();
    }
    newest_first.push_back(std::move(turn));
    if (!v.parent && plan.stopped.empty()) plan.stopped = V(v.version) + " starts the session";
  }

  // Keep the newest turns that fit the model's input images and input tokens.
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
      plan.stopped = "model " + model.id + " takes at most " +
                     std::to_string(model.max_input_images) + " input images";
      break;
    }
    if (tokens + turn_tokens > token_budget) {
      plan.stopped = "model " + model.id + "'s input limit of " +
                     std::to_string(model.input_token_limit) + " tokens";
      break;
    }
    images += turn_images;
    tokens += turn_tokens;
  }
  newest_first.resize(kept);
  if (kept == static_cast<size_t>(limits.max_turns) && plan.stopped.empty()) {
    plan.stopped = "the server's --chain-turns " + std::to_string(limits.max_turns);
  }
  plan.turns.assign(std::make_move_iterator(newest_first.rbegin()),
                    std::make_move_iterator(newest_first.rend()));
  return plan;
}

}  // namespace imgmcp::tools
