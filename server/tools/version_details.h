// What the tools keep with each version in session::NewVersion::details (opaque to the store): the
// generation parameters it was made with, what the model said (text, usage, finish reason,
// sources) and, for a backend answer that can be replayed, the turn a later `context: "chain"`
// edit replays. The image bytes are never copied in: the turn's answer image is the version's
// own file, and the image its instruction was sent with is its parent's.
//
//   {"params": {"model": …, "image_size": …, "aspect_ratio": …, "thinking": …, "search": …,
//               "context": "chain", "replayed_versions": [..]},
//    "model_text": …, "finish_reason": …, "usage": {…}, "sources": [{title, uri}],
//    "cost": {usd, input_tokens, output_image_tokens, …, priced_model},
//    "turn": {"user_image": true|false, "replay": "<the backend's opaque replay text>"}}
#pragma once

#include <string>

#include "common/json.h"
#include "imaging/image_backend.h"

namespace imgmcp::tools {

// One replayable turn: the instruction went with the parent's image (user_image) or alone (a
// generation, or a chain edit whose image was the previous answer); `replay` is
// BackendImage::replay of the answer.
struct TurnRecord {
  bool user_image = false;
  std::string replay;
};

// The details text of a version made by a backend call with `params` (as ParamsJson) from
// `answer`; `turn` is kept only when the answer has replay data.
// `cost`: structuredContent.cost of the answer (imaging::CostJson), kept with the version.
std::string MakeVersionDetails(const Json& params, const imaging::BackendImage& answer,
                               const TurnRecord& turn, const Json& cost = Json());

// The parameters a generation or edit was asked with: model always; image_size, aspect_ratio,
// thinking and search when given.
Json ParamsJson(const imaging::GenerationOptions& options, const std::string& model);

// Reading details back. Text that is not a JSON object (older rows hold "{}") has no params and
// no turn.
Json ParamsOf(const std::string& details);  // {} when none
std::optional<TurnRecord> TurnOf(const std::string& details);

// The model's own text, usage, finish reason and (with search) sources as structuredContent
// fields, from a backend answer.
Json AnswerFields(const imaging::BackendImage& answer, bool search);

// The same fields as AnswerFields made them for the answer `details` recorded (with "text", their
// older name for model_text): what a repeat of the call (idempotency_key) answers again.
Json RecordedAnswerFields(const std::string& details);

// Short lines for the result's text block: "Model text: …", "Usage: …", "Finish reason: …",
// "Sources: …". Empty when there is nothing to say.
std::string AnswerLines(const imaging::BackendImage& answer, bool search);

}  // namespace imgmcp::tools
