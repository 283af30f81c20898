// The Gemini image models imgmcp knows, what each supports and costs: the model table
// (docs/generation.md, "The model table"), one JSON document compiled in (gemini_client/
// models.json) with an operator's --model-table file merged over it. The tools' schemas and
// validation (through ImageBackend::Models()) and the request builder (wire_format) read it.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "imaging/generation_params.h"

namespace imgmcp::gemini {

// gemini_client/models.json, embedded at build time.
std::string_view BuiltInModelTableJson();

// The rows of the built-in table, in the order listed to users (read once; the unit tests keep
// the document valid).
const std::vector<imaging::ModelCapabilities>& BuiltInGeminiModels();

// The built-in table with the rows of `file` (--model-table; "" for none) merged over it: rows of
// new ids are added, rows of known ids corrected (imaging/model_table.h). Errors name the file,
// the row and the key.
Result<std::vector<imaging::ModelCapabilities>> LoadGeminiModelTable(const std::string& file);

// The row used for a model id that is not in the table (a newer model, say): only what every
// Gemini image model takes (image_size 1K, the 10 standard ratios, no thinking level, no search),
// conversational edits allowed. `listed` is false.
imaging::ModelCapabilities UnlistedGeminiModel(std::string id);

// Which models a server offers: the default first, then the allowed ones.
struct ModelChoice {
  std::string default_model;
  std::vector<std::string> allow_list;  // --models; empty = every row of the table not retired
  bool allow_retired = false;           // --allow-retired: retired rows may be offered too
};

// The rows of `table` a client is offered: `choice.default_model` first, then each id of the
// allow-list (without it, every row of the table that is not retired, or every row with
// allow_retired) in the order given, without duplicates. kInvalidArgument when the default model
// is not in a non-empty allow-list, or when a retired model is named without allow_retired
// (RetiredModelNote says why); ids outside the table get UnlistedGeminiModel.
Result<std::vector<imaging::ModelCapabilities>> OfferedGeminiModels(
    const std::vector<imaging::ModelCapabilities>& table, const ModelChoice& choice);

// For a retired row of `table`: "model X was retired on D; use R instead (--allow-retired …)",
// naming the replacement it leads to; "" for any other id.
std::string RetiredModelNote(const std::vector<imaging::ModelCapabilities>& table,
                             std::string_view model);

// "gemini-2.5-flash-image,gemini-3-pro-image" → its ids; blanks and empty items skipped.
std::vector<std::string> SplitModelList(std::string_view text);

}  // namespace imgmcp::gemini
