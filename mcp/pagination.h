// Opaque cursors for offset-paginated lists (tools/list, prompts/list, resources/list across
// providers). A cursor is base64 of "<kind>:<payload>" so one list's cursor is refused by another.
// Cursors come back from clients, so they are checked for size before anything is decoded: the
// server's own are a few dozen bytes to a couple of hundred.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "common/json.h"
#include "common/result.h"

namespace imgmcp::mcp {

// The longest cursor a client may send back; EncodeCursor's stay well below it.
inline constexpr size_t kMaxCursorBytes = 512;

std::string EncodeCursor(std::string_view kind, std::string_view payload);
// The payload of a cursor made by EncodeCursor with the same kind; kInvalidArgument (naming the
// cursor) otherwise, and without decoding anything for one longer than kMaxCursorBytes.
Result<std::string> DecodeCursor(std::string_view kind, std::string_view cursor);

// Reads params.cursor: nullopt when absent or null; kInvalidArgument when it is not a string.
Result<std::optional<std::string>> CursorParam(const Json& params);

// Offset cursors: the index of the first item of the next page.
std::string EncodeOffsetCursor(std::string_view kind, size_t offset);
Result<size_t> DecodeOffsetCursor(std::string_view kind, std::string_view cursor, size_t size);

// One page of an offset-paginated list of `size` items: items [begin, end), and the cursor of
// the next page when there is one. page_size 0 counts as 1.
struct OffsetPage {
  size_t begin = 0;
  size_t end = 0;
  std::optional<std::string> next_cursor;
};
Result<OffsetPage> PageOf(std::string_view kind, const std::optional<std::string>& cursor,
                          size_t size, size_t page_size);

}  // namespace imgmcp::mcp
