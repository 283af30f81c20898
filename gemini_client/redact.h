// Redaction of credentials from every text imgmcp shows: error messages (tool results), progress
// lines and log lines (docs/security.md, "Credentials"). An endpoint or a proxy may echo the
// request's headers or form in an error body, and a message quotes a bounded piece of that body.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace imgmcp::gemini {

inline constexpr char kRedacted[] = "[redacted]";

// Replaces in `text` each of `secrets` (those of at least 4 bytes; longer ones first) with
// [redacted]. True when something was replaced.
bool RedactSecrets(std::string& text, const std::vector<std::string>& secrets);

// `text` with `secrets` redacted (RedactSecrets), and with whatever is shaped like an OAuth
// credential redacted too, so that one quoted only in part (cut off by a message's length limit)
// or not known here (an older access token) does not show either: the value after "Bearer ", a
// Google access token (ya29.…), a Google refresh token (1//…) and a JWT (eyJ….…[.…]).
std::string Redact(std::string text, const std::vector<std::string>& secrets);

}  // namespace imgmcp::gemini
