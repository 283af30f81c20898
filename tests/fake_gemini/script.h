// Fault-injection actions for the fake Gemini server: one action is consumed per generateContent
// call, in the order they were queued through POST /_fake/script.
#pragma once

#include <optional>
#include <string>

#include "common/json.h"
#include "common/result.h"

namespace imgmcp::fake_gemini {

struct Action {
  // Answer with an error status and a Google-style error body instead of an image.
  int status = 0;           // 0: no scripted status
  std::string message;      // error.message override
  std::string api_status;   // error.status override (default from the HTTP status)
  std::string retry_delay;  // adds google.rpc.RetryInfo{retryDelay}, e.g. "2s"
  std::string quota_id;     // adds google.rpc.QuotaFailure with this quotaId (e.g. …PerDay)
  std::string reason;       // adds google.rpc.ErrorInfo{reason}
  std::optional<std::string> raw_body;   // exact body for the error (e.g. non-JSON HTML)
  int delay_ms = 0;                      // wait before answering (on top of the configured latency)
  std::string block_reason;              // 200 with promptFeedback.blockReason and no candidates
  std::string finish_reason;             // 200 with this non-STOP finishReason and no image
  std::string finish_message;            // candidates[0].finishMessage
  std::optional<std::string> text_only;  // 200, STOP, one text part, no image
  int thought_parts = 0;           // leading thought:true parts (text, then a draft image, …)
  bool jpeg_labelled_png = false;  // the image is re-encoded as JPEG but labelled image/png
  bool truncated_body = false;     // send about half the body, then close the connection
  bool malformed_json = false;     // 200 with a body that is not valid JSON
  bool drop_connection = false;    // send the status line and headers, then close
  std::string fixed_image_file;    // answer with these bytes instead of the engine's output
  // Answer with the request's headers echoed back, as a proxy or an echo server might: "json" is
  // a Google-style error body whose message lists them, "text" a text/plain body of "Name: value"
  // lines. The status is `status` (400 when unset).
  std::string echo_headers;
  // 200 with an answer of exactly this many bytes (one text part, padded out), declared with a
  // Content-Length, or sent chunked (no length) when `chunked` is true.
  int answer_bytes = 0;
  bool chunked = false;
  // Hold the call (before any delay) until POST /_fake/release opens the gate of this name, a
  // reset clears the log, or the server stops: a latch a test opens when it is ready.
  std::string hold;
};

// Parses one action object strictly: unknown keys and wrong types are errors naming the key.
Result<Action> ParseAction(const Json& json);

// Parses an array of action objects (or a single object, or {"actions":[…]}).
Result<std::vector<Action>> ParseScript(const Json& json);

// The action back as JSON, for the request log.
Json ActionToJson(const Action& action);

}  // namespace imgmcp::fake_gemini
