// Which earlier turns a `context: "chain"` edit replays (docs/generation.md, "Conversational
// edits").
//
// From the version being edited, the walk follows parent links back: each version that a backend
// call made, with replay data (version_details.h), by the same backend and model, is one turn.
// A revert is passed through to the version it copies (same image, so that version's turns led to
// it); an import, a version without replay data (the local engine's, or an older row), one made
// by another model (signatures are valid only for the model that made them), or a parent that no
// longer exists (cleared, pruned) ends the walk. So a chain across a from_version fork, a revert
// or a reset replays only the turns that led to the edited image. The newest turns are kept, at
// most `max_turns`, as long as the images (replayed ones plus the references of the new turn) fit
// the model's input images and the estimated tokens fit its input-token limit.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"
#include "imaging/generation_params.h"
#include "server/tools/version_details.h"
#include "session/session_store.h"

namespace imgmcp::tools {

struct ChainLimits {
  int max_turns = 4;                                  // --chain-turns
  const imaging::ModelCapabilities* model = nullptr;  // the model the edit asks for
  std::string backend;                                // the backend's name
  size_t prompt_bytes = 0;                            // the new instruction
  int reference_images = 0;                           // images sent with it
};

struct PlannedTurn {
  session::VersionInfo version;  // its answer's image is this version's
  TurnRecord record;
  // The version whose image went with the instruction (record.user_image), i.e. the parent.
  std::optional<session::VersionInfo> user_image;
};

struct ChainPlan {
  std::vector<PlannedTurn> turns;  // oldest first
  // Why the walk replays nothing older, for the result text, e.g. "version 1 is an import".
  std::string stopped;
};

// Looks a version of the edited session up; kNotFound when it is gone.
using VersionLookup = std::function<Result<session::VersionInfo>(int64_t version)>;

// Errors: what `lookup` returns other than kNotFound.
Result<ChainPlan> PlanChain(const session::VersionInfo& base, const ChainLimits& limits,
                            const VersionLookup& lookup);

// The estimated input tokens of one turn: its text and replay data at 4 bytes a token, and each
// of its images at the model's input_image_tokens.
int64_t EstimatedTurnTokens(const PlannedTurn& turn, const imaging::ModelCapabilities& model);

}  // namespace imgmcp::tools
