// Idempotency keys (docs/design.md §3, "Exactly-once writes"): their form, and the one rule of a
// repeat — the same key with the same arguments is the same call, with other arguments an error.
// The stores record a key with its commit or clear (IdempotencyRecord, session_store.h); the tools
// look it up in the session's turn and answer a repeat from what was recorded.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "common/result.h"
#include "session/session_store.h"

namespace imgmcp::session {

inline constexpr size_t kMaxIdempotencyKeyLength = 128;

// 1 to 128 characters from A-Z a-z 0-9 . _ : -
bool IsValidIdempotencyKey(std::string_view key);

// kInvalidArgument naming `field`, what was given (cut short) and what a key may be.
Error InvalidIdempotencyKeyError(std::string_view key,
                                 const std::string& field = "idempotency_key");

// Ok when `applied` was recorded by a call with `digest` (a repeat of it); kInvalidArgument naming
// idempotency_key otherwise (the key was used in `session_id` for another call).
Status CheckSameCall(const AppliedKey& applied, const std::string& digest, const std::string& key,
                     const std::string& session_id);

}  // namespace imgmcp::session
