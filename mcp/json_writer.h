// Compact JSON serialisation of outgoing messages, byte-identical to
// Json::dump(-1, ' ', false, Json::error_handler_t::replace) but faster: long strings that need
// no escaping (the base64 of a full-size image in a tool result) are copied verbatim, and small
// values are written without setting up nlohmann's serializer for each.
#pragma once

#include <string>

#include "common/json.h"

namespace imgmcp::mcp {

// Appends the compact JSON text of `value` to `out`. Long printable-ASCII strings are copied
// verbatim (nlohmann escapes byte by byte, ~25 ms for a 3.8 MB base64 string); other ASCII
// strings, integers, booleans and null are written here; non-ASCII strings (UTF-8 to check) and
// floating-point numbers go to nlohmann. The output is the same bytes as dump().
void AppendCompactJson(const Json& value, std::string& out);

std::string DumpCompactJson(const Json& value);

}  // namespace imgmcp::mcp
