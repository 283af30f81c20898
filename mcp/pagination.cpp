#include "mcp/pagination.h"

#include <algorithm>
#include <optional>

#include "common/base64.h"
#include "common/decimal.h"

namespace imgmcp::mcp {

namespace {
Error BadCursor() { return MakeError(ErrorCode::kInvalidArgument, "Invalid cursor"); }
}  // namespace

std::string EncodeCursor(std::string_view kind, std::string_view payload) {
  std::string raw(kind);
  raw += ':';
  raw += payload;
  return Base64Encode(raw);
}

Result<std::string> DecodeCursor(std::string_view kind, std::string_view cursor) {
  if (cursor.size() > kMaxCursorBytes) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "Invalid cursor: " + std::to_string(cursor.size()) +
                         " bytes; this server's cursors are at most " +
                         std::to_string(kMaxCursorBytes));
  }
  auto raw = Base64Decode(cursor);
  if (!raw.ok()) return BadCursor();
  const std::string& text = raw.value();
  if (text.size() <= kind.size() || text.compare(0, kind.size(), kind) != 0 ||
      text[kind.size()] != ':') {
    return BadCursor();
  }
  return text.substr(kind.size() + 1);
}

Result<std::optional<std::string>> CursorParam(const Json& params) {
  if (!params.is_object()) return std::optional<std::string>();
  auto it = params.find("cursor");
  if (it == params.end() || it->is_null()) return std::optional<std::string>();
  if (!it->is_string()) return MakeError(ErrorCode::kInvalidArgument, "cursor must be a string");
  return std::optional<std::string>(it->get<std::string>());
}

std::string EncodeOffsetCursor(std::string_view kind, size_t offset) {
  return EncodeCursor(kind, std::to_string(offset));
}

Result<size_t> DecodeOffsetCursor(std::string_view kind, std::string_view cursor, size_t size) {
  auto payload = DecodeCursor(kind, cursor);
  if (!payload.ok()) return payload.error();
  const std::optional<size_t> offset = ParseDecimal<size_t>(payload.value(), 1, size);
  if (!offset) return BadCursor();
  return *offset;
}

Result<OffsetPage> PageOf(std::string_view kind, const std::optional<std::string>& cursor,
                          size_t size, size_t page_size) {
  OffsetPage page;
  if (cursor) {
    auto offset = DecodeOffsetCursor(kind, *cursor, size);
    if (!offset.ok()) return offset.error();
    page.begin = offset.value();
  }
  page.end = std::min(size, page.begin + std::max<size_t>(page_size, 1));
  if (page.end < size) page.next_cursor = EncodeOffsetCursor(kind, page.end);
  return page;
}

}  // namespace imgmcp::mcp
