// generate_image with delivery "batch" (README.md, "Half price for work that can wait"): the call
// runs as a task whose row the session store created as a batch task (StoreTaskLedger). Here it is
// checked as an immediate call would be — the model, its options, the cost against max_cost_usd
// and the budgets — and then handed off: the task stays working, and the store's batch poller
// (server/app/batch_poller.h) puts it in a Gemini batch job and commits its answer through the
// same generate path.
#include <string>
#include <vector>

#include "common/random.h"
#include "server/tools/image_tools.h"

namespace imgmcp::tools {

namespace {

// Why a batch call is refused before anything is sent; "" when nothing is against it.
std::string BatchRefusal(const GenerateImageArgs& args, const mcp::ToolCallContext& ctx) {
  if (ctx.TaskId().empty()) {
    return "delivery \"batch\" needs a task-capable client: one that declared the tasks "
           "extension (io.modelcontextprotocol/tasks) or, on protocol 2025-11-25, called "
           "tools/call with a task; the image arrives minutes to hours later, as the task's "
           "result. Call again without delivery (or with \"now\") for the image at once";
  }
  if (!args.reference_images.empty()) {
    return "delivery \"batch\" takes no reference_images (a batch job carries text requests "
           "only); call with delivery \"now\" to use them";
  }
  if (args.save.save_to) {
    return "delivery \"batch\" takes no save_to (the image arrives later, maybe on another "
           "replica); once the task completes, get_image with save_to writes the copy";
  }
  if (args.idempotency_key) {
    return "delivery \"batch\" takes no idempotency_key: the batch task itself commits at most "
           "once (keep its task id)";
  }
  return {};
}

}  // namespace

Result<mcp::ToolResult> ImageTools::HandOffToBatch(const GenerateImageArgs& args,
                                                   mcp::ToolCallContext& ctx) {
  if (const std::string refusal = BatchRefusal(args, ctx); !refusal.empty()) {
    return MakeError(ErrorCode::kFailedPrecondition, refusal);
  }
  if (!options_.batch_refusal.empty()) {
    return MakeError(ErrorCode::kFailedPrecondition, options_.batch_refusal);
  }
  imaging::GenerationOptions options = args.Options();
  std::vector<std::string> ignored;
  ASSIGN_OR_RETURN(const imaging::ModelCapabilities* model, ChooseModel(options, &ignored));
  if (model->batch_price_factor <= 0) {
    return MakeError(ErrorCode::kFailedPrecondition,
                     "model " + model->id +
                         " takes no batch delivery (the model table gives it no "
                         "batch_price_factor); use delivery \"now\" or another model");
  }
  if (args.generation.estimate_only.value_or(false)) {  // answered now, as an immediate call
    GenerateImageArgs now = args;
    now.delivery.reset();
    return Generate(now, ctx);
  }
  // The worst case against max_cost_usd and the budgets now; what it cost is charged when its
  // answer commits. The hold is released when this returns.
  CallerStore scoped(store_, ctx.caller());
  // The session is named in the task's row when the call names none: a new one, here as there.
  ASSIGN_OR_RETURN(CostCheck cost, CheckCost(scoped.get(), "generate_image",
                                             args.SessionFor().value_or("img-" + RandomHex(6)),
                                             args.generation, *model, args.CostInputs(options)));
  mcp::ToolResult result;
  result.handed_off = BatchWaitingMessage(options_.batch_window);
  return result;
}

}  // namespace imgmcp::tools
