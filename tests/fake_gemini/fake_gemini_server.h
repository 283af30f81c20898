// FakeGeminiServer: a Gemini-compatible HTTP server for tests, built on imaging's LocalBackend so
// generations and edits really happen, with per-call fault injection and a request log.
//
// Gemini surface: POST /{v1|v1beta|v1alpha}/models/{model}:generateContent and
// :streamGenerateContent (?alt=sse → SSE, else a JSON array). Key from x-goog-api-key or ?key=.
// Per-model rules as the real API's (fake_wire.h): image sizes (pixel sizes from LocalBackend's
// table), aspect ratios, thinking levels, search grounding (groundingMetadata in the answer), and
// thoughtSignatures on 3.x answers that must come back intact when a chat replays them.
// Vertex AI surface (same wire format and rules): POST /v1/projects/{project}/locations/{location}/
// publishers/google/models/{model}:generateContent with Authorization: Bearer <a token issued by
// the fake's token endpoint, fake_oauth.h> (else 401 UNAUTHENTICATED), and express mode
// POST /v1/publishers/google/models/{model}:generateContent with x-goog-api-key. Log entries add
// api ("gemini"|"vertex"), project, location, bearer_present and bearer_valid.
// Batch API (fake_batches.h): POST /{v}/models/{model}:batchGenerateContent with the requests
// inlined (each answered now with its own scripted action, logged as rpc "batchGenerateContent"
// with its batch_key), GET /{v}/batches/{id} (rpc "batches.get") and POST
// /{v}/batches/{id}:cancel (rpc "batches.cancel"), GET /{v}/batches?pageSize&pageToken (rpc
// "batches.list", newest first); config "batch_states" sets the schedule.
// Control surface:
//   POST /_fake/script    JSON array of actions (script.h), appended to the queue; one per call
//   GET  /_fake/requests  JSON array: the request log (see Requests())
//   POST /_fake/reset     clears the queue and the log, restores the start-up settings
//   POST /_fake/config    {"latency_ms":N, "fixed_image_file":PATH, "invalid_key":K,
//                          "serve_as":{ID:KNOWN_ID}} (serve ID with the rules of KNOWN_ID)
//   POST /_fake/release   {"gate":NAME}: opens a gate; the calls held at it (script action
//                         "hold") go on, and later ones pass. A reset closes every gate.
//   GET  /_fake/batches   JSON array of the batch jobs: name, model, state, requests, reads,
//   cancels GET  /_fake/wait?requests=N&held=M&timeout_ms=T
//                         answers once at least N generateContent calls are logged and at least
//                         M are held at a gate: 200 {"requests":R,"held":H}, or 408 with the same
//                         body when T ms (default 20000) pass first. A test waits on it, woken by
//                         the fake, instead of polling the log.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "common/json.h"
#include "common/result.h"
#include "tests/fake_gemini/fake_batches.h"
#include "tests/fake_gemini/fake_oauth.h"
#include "tests/fake_gemini/script.h"

namespace httplib {
class Server;
struct Request;
struct Response;
}  // namespace httplib

namespace imgmcp::fake_gemini {

struct FakeGeminiOptions {
  std::chrono::milliseconds latency{0};  // added to every generateContent call
  std::string fixed_image_file;          // when set, every image answer is these bytes
  std::string invalid_key = "bad-key";   // this key gets 400 API_KEY_INVALID
  // Model ids served with the rules of a model the fake knows (a model newer than its table).
  std::map<std::string, std::string> serve_as;
  // Both set: serve HTTPS with this PEM certificate chain and key (proxy CONNECT and CA tests).
  std::string tls_cert_file;
  std::string tls_key_file;
  // The states each new batch job shows, one per read of batches/{id} (fake_batches.h).
  std::vector<std::string> batch_states = DefaultBatchSchedule();
};

class FakeGeminiServer {
 public:
  explicit FakeGeminiServer(FakeGeminiOptions options = {});
  ~FakeGeminiServer();
  FakeGeminiServer(const FakeGeminiServer&) = delete;
  FakeGeminiServer& operator=(const FakeGeminiServer&) = delete;

  // Binds (port 0 = OS-chosen) and serves on a background thread. Returns the bound port.
  Result<int> Start(const std::string& host = "127.0.0.1", int port = 0);
  // Stops serving, wakes scripted delays, joins the thread. Idempotent.
  void Stop();

  int port() const { return port_; }
  std::string base_url() const;  // "http://127.0.0.1:PORT" (https:// when serving TLS)

  // Same as POST /_fake/script, /_fake/reset, /_fake/config and GET /_fake/requests.
  Status PushScript(const Json& actions);
  void Reset();
  Status Configure(const Json& config);
  // Each entry: method, path, target, api_version, model, rpc, api_key_present, api_key,
  // api_key_source ("header"|"query"|""), headers {lowercase name: value}, body_bytes, body (the
  // request JSON with base64 replaced by sizes), images [{declared_mime_type, sniffed_mime_type,
  // bytes, sha256, role, content}], turns [{role, texts, images, signatures}] (signatures: the
  // replayed model parts whose thoughtSignature verified), signature_problem ("missing" or
  // "altered", when that was why the request got 400), action (the scripted action used, or
  // null), response_status.
  Json Requests() const;
  // Same as GET /_fake/batches: every batch job with its state, requests, reads and cancels.
  Json Batches() const { return batches_.List(); }
  size_t RequestCount() const;
  // Same as POST /_fake/release: opens `gate` for the calls held at it and for later ones.
  void Release(const std::string& gate);
  // Blocks until at least `count` generateContent requests have arrived (or `timeout`).
  bool WaitForRequests(size_t count, std::chrono::milliseconds timeout) const;
  // Blocks until at least `requests` calls are logged and at least `held` are held at a gate (or
  // `timeout`, or Stop()). True when both counts were reached.
  bool WaitFor(size_t requests, size_t held, std::chrono::milliseconds timeout) const;
  size_t PendingActions() const;
  size_t HeldCount() const;  // calls held at a gate now

 private:
  // Which surface a generateContent request came on.
  struct Route {
    std::string api = "gemini";  // or "vertex"
    std::string version, model, rpc, project, location;
    bool express = false;  // vertex with an API key
  };
  void HandleGenerate(const httplib::Request& req, httplib::Response& res, const Route& route);
  void RegisterOAuthRoutes();
  void RegisterBatchRoutes();
  // batchGenerateContent: each inlined request answered (AnswerRequest) and kept in a new job.
  void HandleBatchCreate(const httplib::Request& req, httplib::Response& res);
  // One inlined request of a job, logged with its key and answered with the next scripted
  // action: {metadata: {key}, response | error {code, message, status}}.
  Json AnswerBatchItem(const std::string& model, const std::string& key, const Json& request,
                       const FakeGeminiOptions& options);
  // batches/{id} and batches/{id}:cancel.
  void HandleBatchJob(const httplib::Request& req, httplib::Response& res, bool cancel);
  // GET batches (batches.list): a page of jobs, newest first.
  void HandleBatchList(const httplib::Request& req, httplib::Response& res);
  void HandleControl(const httplib::Request& req, httplib::Response& res);
  // A request's entry in the log: its index in the log of one epoch (Reset starts a new one).
  struct LogSlot {
    uint64_t epoch = 0;
    size_t index = 0;
  };
  // What a generateContent request body gets from `model`'s rules and `action` (its scripted
  // error, block, finish reason, text or image): an HTTP status and a JSON body. Shared by the
  // immediate calls and each request of a batch job; annotates the request's log entry.
  struct Answer {
    int status = 200;
    std::string body;
  };
  Answer AnswerRequest(const std::string& model, const std::string& request_body,
                       const Action& action, const FakeGeminiOptions& options, LogSlot index);
  // A Batch API request logged as `rpc` (with `extra`) and its key checked: its log slot, or
  // nullopt when refused (`res` answered).
  std::optional<LogSlot> AdmitBatchCall(const httplib::Request& req, httplib::Response& res,
                                        const std::string& rpc, const Json& extra);
  // Waits `d` unless Stop() is called first.
  void Pause(std::chrono::milliseconds d);
  // Waits until `gate` opens, a reset ends the log epoch `epoch`, or Stop() is called.
  void Hold(const std::string& gate, uint64_t epoch);
  void SetStatus(LogSlot slot, int status);
  // Sets `fields` on the slot's entry; nothing when a reset has cleared it since.
  void Annotate(LogSlot slot, const Json& fields);
  void AnnotateLocked(LogSlot slot, const Json& fields);

  const FakeGeminiOptions initial_options_;
  FakeOAuth oauth_;      // thread-safe on its own
  FakeBatches batches_;  // thread-safe on its own
  std::unique_ptr<httplib::Server> server_;
  std::thread thread_;
  int port_ = 0;
  std::string host_;

  // guards options_, script_, log_, log_epoch_, open_gates_, held_, stopping_
  mutable std::mutex mutex_;
  // signalled on new log entries, on a call held or let go, on Release, Reset and Stop()
  mutable std::condition_variable changed_;
  FakeGeminiOptions options_;
  std::deque<Action> script_;
  std::vector<Json> log_;
  uint64_t log_epoch_ = 0;            // incremented by Reset
  std::set<std::string> open_gates_;  // cleared by Reset
  size_t held_ = 0;                   // calls waiting in Hold
  bool stopping_ = false;
};

}  // namespace imgmcp::fake_gemini
