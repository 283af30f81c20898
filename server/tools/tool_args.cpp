#include "server/tools/tool_args.h"

namespace imgmcp::tools {

const char kInlineDescription[] =
    "How the image comes back in the result: \"preview\" (default; long edge at most 768 px and "
    "about 600 KB, fine for looking at it), \"full\" (the full-resolution bytes), or \"none\" (no "
    "image bytes; read the resource_link or the file path instead — best for agents that pass "
    "tool results on as text, such as ADK).";
const char kReferenceImagesDescription[] =
    "Optional extra images that guide the result (style, subject), at most 14. Each is "
    "{\"path\": ...} or {\"data\": ..., \"mime_type\": ...}.";
const char kReferenceImageDescription[] = "A reference image.";
const char kExistingSessionIdDescription[] =
    "The editing session; 1 to 64 characters from A-Z a-z 0-9 . _ -, starting with a letter or "
    "digit.";

const std::vector<std::string>& AspectRatios() {
  static const std::vector<std::string> kRatios = {"1:1", "2:3", "3:2",  "3:4",  "4:3",
                                                   "4:5", "5:4", "9:16", "16:9", "21:9"};
  return kRatios;
}

const EnumChoices<InlineMode>& InlineModeChoices() {
  static const EnumChoices<InlineMode> kChoices = {
      {"preview", InlineMode::kPreview}, {"full", InlineMode::kFull}, {"none", InlineMode::kNone}};
  return kChoices;
}

Status EditImageArgs::Check(const std::string&) const {
  if (image.has_value() && from_version.has_value()) {
    return Error(ErrorCode::kInvalidArgument,
                 "'image' and 'from_version' cannot be used together: 'image' edits an outside "
                 "image, 'from_version' an earlier version of the session");
  }
  return Status::Ok();
}

}  // namespace imgmcp::tools
