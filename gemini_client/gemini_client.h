// GeminiClient: the ImageBackend that calls Google's Gemini image model over REST
// (POST {base}/{version}/models/{model}:generateContent), with retries and a per-call deadline.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"
#include "gemini_client/http_call.h"
#include "gemini_client/proxy.h"
#include "gemini_client/request_auth.h"
#include "gemini_client/retry_policy.h"
#include "gemini_client/sleeper.h"
#include "gemini_client/vertex.h"
#include "imaging/image_backend.h"
#include "metrics/metrics.h"

namespace imgmcp::gemini {

inline constexpr char kDefaultBaseUrl[] = "https://generativelanguage.googleapis.com";
inline constexpr char kDefaultModel[] = "gemini-3.1-flash-lite-image";
inline constexpr char kSystemCaBundle[] = "/etc/ssl/certs/ca-certificates.crt";
// kSystemCaBundle when that file exists (Debian's ca-certificates), else "" (OpenSSL's default).
std::string SystemCaBundleIfPresent();

struct GeminiClientOptions {
  std::string api_key;                     // sent only in x-goog-api-key; never logged or echoed
  std::string base_url = kDefaultBaseUrl;  // https:// (verified) or http:// (fakes)
  std::string api_version = "v1beta";      // "v1beta", "v1", "v1alpha"; "" omits the segment
  std::string model = kDefaultModel;       // the default model
  // The models callers may choose (--models / IMGMCP_MODELS); empty = every model of the table
  // that is not retired. `model` must be among them.
  std::vector<std::string> models;
  // The model table (LoadGeminiModelTable); empty = BuiltInGeminiModels().
  std::vector<imaging::ModelCapabilities> model_table;
  bool allow_retired = false;  // --allow-retired: retired models may be offered and called
  std::chrono::milliseconds connect_timeout{10'000};
  std::chrono::milliseconds read_timeout{120'000};  // per wait for bytes on the socket
  // Overall budget for one Generate/Edit including retries; CallContext.deadline may shorten it.
  std::chrono::milliseconds call_timeout{300'000};
  RetryPolicyOptions retry;  // max_attempts 5, base_delay 1 s, max_delay 60 s, jitter
  // CA bundle for https; "" → kSystemCaBundle when that file exists, else OpenSSL's default.
  std::string ca_cert_path;
  std::string extra_ca_file;  // trusted besides ca_cert_path (--ca-file / SSL_CERT_FILE)
  ProxyEnvironment proxies;   // HTTPS_PROXY / HTTP_PROXY / NO_PROXY
  // The endpoint/auth strategy. Unset `vertex`: the Gemini API at
  // {base}/{api_version}/models/{model}:generateContent. Set: Vertex AI (vertex.h; api_version
  // is then unused and the models are those the location serves). `auth` null: `api_key` in
  // x-goog-api-key; else e.g. a TokenCache of Application Default Credentials.
  std::optional<VertexTarget> vertex;
  std::shared_ptr<RequestAuth> auth;
  // Counts calls, their duration and retries by cause (metrics/metrics.h); nullptr: off. Must
  // outlive the client.
  metrics::Metrics* metrics = nullptr;
  // Aborts a call at its deadline (HttpCallOptions::timers); may be null. Must outlive the client.
  TimerThread* timers = nullptr;
};

// Checks the options: (without `auth`) a non-empty key without control characters, a base URL
// http(s)://host…, an api_version of lowercase letters and digits, model ids (the default and each
// allowed one) of [A-Za-z0-9._-] without "..", the default among the allowed ones, positive
// timeouts and 1..20 attempts.
Status ValidateOptions(const GeminiClientOptions& options);

// The rows `options` offers (OfferedGeminiModels, or OfferedVertexModels on Vertex AI), from
// its model table (the built-in one when empty).
Result<std::vector<imaging::ModelCapabilities>> OfferedModels(const GeminiClientOptions& options);

class GeminiClient final : public imaging::ImageBackend {
 public:
  // Validates `options`. `post` sends one request (&PostJson, or the network module's entry);
  // `sleeper` is the time seam for retry waits (RealSleeper when null).
  static Result<std::unique_ptr<GeminiClient>> Create(GeminiClientOptions options,
                                                      PostJsonFunction post,
                                                      std::shared_ptr<Sleeper> sleeper = nullptr);

  // "gemini", or "vertex" for Vertex AI.
  std::string Name() const override { return options_.vertex.has_value() ? "vertex" : "gemini"; }
  // The credential in use and the proxy calls go through, for --self-check (never a secret).
  std::string DescribeAuth() const { return auth_->Describe(); }
  std::string DescribeProxy() const;
  std::string Model() const override { return options_.model; }
  // The default model first, then the other allowed ones (gemini_client/models.h).
  const std::vector<imaging::ModelCapabilities>& Models() const override { return models_; }
  // A retired model: its date and replacement (RetiredModelNote). On Vertex AI in a regional
  // location: what that location serves (VertexModelsNote).
  std::string ModelNote(const std::string& model) const override;
  // Thread-safe: each call uses its own connection and holds no shared mutable state.
  Result<imaging::BackendImage> Generate(const imaging::GenerateRequest& request,
                                         const imaging::CallContext& ctx) override;
  Result<imaging::BackendImage> Edit(const imaging::EditRequest& request,
                                     const imaging::CallContext& ctx) override;

 private:
  GeminiClient(GeminiClientOptions options, std::vector<imaging::ModelCapabilities> models,
               Endpoint endpoint, PostJsonFunction post, std::shared_ptr<Sleeper> sleeper,
               std::shared_ptr<RequestAuth> auth, std::optional<ProxyServer> proxy);

  // The row of the requested model ("" = the default); kInvalidArgument for one not allowed.
  Result<const imaging::ModelCapabilities*> Choose(const std::string& model) const;
  // Sends `body` to `model`, retrying per the policy; every error message is scrubbed of the key.
  Result<imaging::BackendImage> Call(const std::string& model, const std::string& body,
                                     const imaging::CallContext& ctx);
  // The retry loop of Call and its steps.
  struct CallState;
  struct AttemptOutcome;
  Result<imaging::BackendImage> CallUnscrubbed(const std::string& path, const std::string& body,
                                               const imaging::CallContext& ctx);
  Status CheckAttemptAllowed(const CallState& call, const imaging::CallContext& ctx) const;
  Result<AttemptOutcome> Attempt(CallState& call, const std::string& path, const std::string& body,
                                 const imaging::CallContext& ctx);
  // The POST with the current credential; a 401 drops it and, once per call, posts again with
  // a fresh one. A credential that cannot be had is an error (kUnavailable: worth a retry).
  Result<HttpAnswer> PostAuthorized(CallState& call, const std::string& path,
                                    const std::string& body, const imaging::CallContext& ctx,
                                    std::chrono::steady_clock::time_point deadline,
                                    HttpFailure* failure);
  static AttemptOutcome TransportFailure(Error error, const HttpFailure& http_failure);
  static AttemptOutcome ClassifyAnswer(const HttpAnswer& answer);
  Status WaitToRetry(CallState& call, AttemptOutcome outcome, const imaging::CallContext& ctx);
  // `error` with every credential redacted (redact.h) and the key hint fitted to the auth.
  Error Scrub(Error error) const;
  // The key and what the auth says an answer could echo (RequestAuth::SecretsToScrub).
  std::vector<std::string> Secrets() const;

  const GeminiClientOptions options_;
  const std::vector<imaging::ModelCapabilities> models_;
  const Endpoint endpoint_;
  const std::shared_ptr<RequestAuth> auth_;
  HttpCallOptions http_options_;
  const PostJsonFunction post_;
  const std::shared_ptr<Sleeper> sleeper_;
};

}  // namespace imgmcp::gemini
