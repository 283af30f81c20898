#include "gemini_client/gemini_client.h"

#include <algorithm>
#include <filesystem>
#include <optional>
#include <random>
#include <utility>

#include "common/ascii.h"
#include "common/log.h"
#include "common/trace_context.h"
#include "gemini_client/models.h"
#include "gemini_client/redact.h"
#include "gemini_client/wire_format.h"

namespace imgmcp::gemini {
namespace {

using imaging::BackendImage;
using imaging::CallContext;

constexpr char kLog[] = "gemini";

bool IsModelChar(char c) { return IsAsciiAlnum(c) || c == '.' || c == '_' || c == '-'; }

std::string Plural(int n, const char* word) {
  return std::to_string(n) + " " + word + (n == 1 ? "" : "s");
}

std::string SecondsText(std::chrono::steady_clock::duration d) {
  return FormatDelay(std::chrono::duration_cast<std::chrono::milliseconds>(d));
}

}  // namespace

Result<std::vector<imaging::ModelCapabilities>> OfferedModels(const GeminiClientOptions& o) {
  const auto& table = o.model_table.empty() ? BuiltInGeminiModels() : o.model_table;
  const ModelChoice choice{o.model, o.models, o.allow_retired};
  return o.vertex.has_value() ? OfferedVertexModels(*o.vertex, table, choice)
                              : OfferedGeminiModels(table, choice);
}

Status ValidateOptions(const GeminiClientOptions& o) {
  if (o.auth == nullptr && o.api_key.empty()) {
    return MakeError(
        ErrorCode::kPermissionDenied,
        "no Gemini API key is configured; set GEMINI_API_KEY or use the local backend");
  }
  for (char c : o.api_key) {
    if (static_cast<unsigned char>(c) < 0x21 || c == 0x7f) {
      return MakeError(ErrorCode::kInvalidArgument,
                       "the Gemini API key contains whitespace or control characters; check "
                       "GEMINI_API_KEY");
    }
  }
  RETURN_IF_ERROR(ParseBaseUrl(o.base_url));
  for (char c : o.api_version) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'))) {
      return MakeError(ErrorCode::kInvalidArgument,
                       "the Gemini API version must be like v1beta or v1 (lowercase letters and "
                       "digits)");
    }
  }
  std::vector<std::string> ids = o.models;
  ids.push_back(o.model);
  for (const std::string& id : ids) {
    bool model_ok = !id.empty() && id.size() <= 128 && id.find("..") == std::string::npos;
    for (char c : id) model_ok = model_ok && IsModelChar(c);
    if (!model_ok) {
      return MakeError(ErrorCode::kInvalidArgument,
                       "the Gemini model id must be 1-128 characters of A-Z a-z 0-9 . _ - without "
                       "\"..\" (e.g. gemini-3.1-flash-lite-image)");
    }
  }
  if (o.vertex.has_value()) RETURN_IF_ERROR(ValidateVertexTarget(*o.vertex));
  RETURN_IF_ERROR(OfferedModels(o));
  using std::chrono::milliseconds;
  if (o.connect_timeout <= milliseconds(0) || o.read_timeout <= milliseconds(0) ||
      o.call_timeout <= milliseconds(0)) {
    return MakeError(ErrorCode::kInvalidArgument, "Gemini timeouts must be positive");
  }
  if (o.retry.max_attempts < 1 || o.retry.max_attempts > 20) {
    return MakeError(ErrorCode::kInvalidArgument, "Gemini max attempts must be between 1 and 20");
  }
  if (o.retry.base_delay < milliseconds(0) || o.retry.max_delay < o.retry.base_delay) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "Gemini retry delays must satisfy 0 <= base delay <= max delay");
  }
  return Status::Ok();
}

Result<std::unique_ptr<GeminiClient>> GeminiClient::Create(GeminiClientOptions options,
                                                           PostJsonFunction post,
                                                           std::shared_ptr<Sleeper> sleeper) {
  if (post == nullptr) {
    return MakeError(ErrorCode::kInternal, "the Gemini client needs an HTTP POST function");
  }
  RETURN_IF_ERROR(ValidateOptions(options));
  auto endpoint = ParseBaseUrl(options.base_url);
  if (!endpoint.ok()) return endpoint.error();
  if (options.ca_cert_path.empty()) options.ca_cert_path = SystemCaBundleIfPresent();
  if (sleeper == nullptr) sleeper = std::make_shared<RealSleeper>();
  if (options.model_table.empty()) options.model_table = BuiltInGeminiModels();
  auto models = OfferedModels(options);
  if (!models.ok()) return models.error();
  for (const imaging::ModelCapabilities& m : *models) {
    if (!m.listed) {
      log::Warn(kLog, "model " + m.id +
                          " is not in imgmcp's model table; it is offered with what every Gemini "
                          "image model takes (image_size 1K, the 10 standard aspect ratios, no "
                          "thinking level, no search)");
    }
  }
  auto proxy = ChooseProxy(options.proxies, *endpoint);
  if (!proxy.ok()) return proxy.error();
  std::shared_ptr<RequestAuth> auth = options.auth;
  if (auth == nullptr) auth = std::make_shared<ApiKeyAuth>(options.api_key, "API key");
  return std::unique_ptr<GeminiClient>(
      new GeminiClient(std::move(options), std::move(*models), std::move(endpoint).value(), post,
                       std::move(sleeper), std::move(auth), std::move(proxy).value()));
}

GeminiClient::GeminiClient(GeminiClientOptions options,
                           std::vector<imaging::ModelCapabilities> models, Endpoint endpoint,
                           PostJsonFunction post, std::shared_ptr<Sleeper> sleeper,
                           std::shared_ptr<RequestAuth> auth, std::optional<ProxyServer> proxy)
    : options_(std::move(options)),
      models_(std::move(models)),
      endpoint_(std::move(endpoint)),
      auth_(std::move(auth)),
      post_(post),
      sleeper_(std::move(sleeper)) {
  http_options_.connect_timeout = options_.connect_timeout;
  http_options_.read_timeout = options_.read_timeout;
  http_options_.ca_cert_path = options_.ca_cert_path;
  http_options_.extra_ca_file = options_.extra_ca_file;
  http_options_.proxy = std::move(proxy);
  http_options_.auth_header = auth_->HeaderName();
  http_options_.timers = options_.timers;
}

std::string GeminiClient::ModelNote(const std::string& model) const {
  if (!options_.allow_retired) {
    if (std::string retired = RetiredModelNote(options_.model_table, model); !retired.empty()) {
      return retired;
    }
  }
  return options_.vertex.has_value() ? VertexModelsNote(*options_.vertex, options_.model_table)
                                     : std::string();
}

std::string GeminiClient::DescribeProxy() const {
  return gemini::DescribeProxy(http_options_.proxy);
}

Result<const imaging::ModelCapabilities*> GeminiClient::Choose(const std::string& model) const {
  const imaging::ModelCapabilities* row =
      model.empty() ? &models_.front() : imaging::FindModel(models_, model);
  if (row == nullptr) {
    std::vector<std::string> ids;
    for (const auto& m : models_) ids.push_back(m.id);
    const std::string note = ModelNote(model);
    return MakeError(ErrorCode::kInvalidArgument,
                     "model \"" + model.substr(0, 80) + "\" is not allowed; allowed: " +
                         imaging::JoinList(ids, ", ") + (note.empty() ? "" : ". " + note));
  }
  return row;
}

Result<BackendImage> GeminiClient::Generate(const imaging::GenerateRequest& request,
                                            const CallContext& ctx) {
  ASSIGN_OR_RETURN(const imaging::ModelCapabilities* model, Choose(request.options.model));
  ASSIGN_OR_RETURN(std::string body, BuildGenerateRequest(request, *model));
  return Call(model->id, body, ctx);
}

Result<BackendImage> GeminiClient::Edit(const imaging::EditRequest& request,
                                        const CallContext& ctx) {
  ASSIGN_OR_RETURN(const imaging::ModelCapabilities* model, Choose(request.options.model));
  ASSIGN_OR_RETURN(std::string body, BuildEditRequest(request, *model));
  return Call(model->id, body, ctx);
}

Error GeminiClient::Scrub(Error error) const {
  if (options_.auth != nullptr) {  // not GEMINI_API_KEY: point at the credential in use
    const std::string hint = "check GEMINI_API_KEY";
    for (size_t pos = error.message.find(hint); pos != std::string::npos;
         pos = error.message.find(hint, pos)) {
      const std::string instead = "check " + auth_->Describe();
      error.message.replace(pos, hint.size(), instead);
      pos += instead.size();
    }
  }
  error.message = Redact(std::move(error.message), Secrets());
  return error;
}

std::vector<std::string> GeminiClient::Secrets() const {
  std::vector<std::string> secrets = auth_->SecretsToScrub();
  secrets.push_back(options_.api_key);
  return secrets;
}

Result<BackendImage> GeminiClient::Call(const std::string& model, const std::string& body,
                                        const CallContext& ctx) {
  const std::string path = options_.vertex.has_value()
                               ? VertexGeneratePath(*options_.vertex, model)
                               : (options_.api_version.empty() ? "" : "/" + options_.api_version) +
                                     "/models/" + model + ":generateContent";
  const auto start = sleeper_->Now();
  auto result = CallUnscrubbed(path, body, ctx);
  if (options_.metrics != nullptr) {
    const std::chrono::duration<double> took = sleeper_->Now() - start;
    options_.metrics->RecordBackendCall(
        Name(), result.ok() ? "ok" : ErrorCodeName(result.error().code), took.count());
  }
  if (!result.ok()) return Scrub(result.error());
  return result;
}

// One call's attempts so far: when it started, its deadline, the count and what went wrong last.
struct GeminiClient::CallState {
  std::chrono::steady_clock::time_point start;
  std::chrono::steady_clock::time_point deadline;
  int attempts = 0;
  bool retry_once_used = false;
  bool reauthorized = false;       // a 401 has dropped a credential once
  bool credential_failed = false;  // the current attempt could not get its credential
  std::string last_error;
  std::mt19937_64 rng{std::random_device{}()};

  std::string WithLast(std::string message) const {
    if (!last_error.empty()) message += " Last error: " + last_error;
    return message;
  }
};

// What one attempt came to: an image, or an error with its kind and a progress line's start.
struct GeminiClient::AttemptOutcome {
  std::optional<BackendImage> image;
  Error error;
  AttemptFailure failure;
  std::string what;
};

Result<BackendImage> GeminiClient::CallUnscrubbed(const std::string& path, const std::string& body,
                                                  const CallContext& ctx) {
  CallState call;
  call.start = sleeper_->Now();
  call.deadline = std::min(call.start + options_.call_timeout, ctx.deadline);
  while (true) {
    RETURN_IF_ERROR(CheckAttemptAllowed(call, ctx));
    ++call.attempts;
    ASSIGN_OR_RETURN(AttemptOutcome outcome, Attempt(call, path, body, ctx));
    if (outcome.image.has_value()) {
      if (call.attempts > 1) {
        log::Info(kLog, "Gemini answered on attempt " + std::to_string(call.attempts));
      }
      return std::move(*outcome.image);
    }
    RETURN_IF_ERROR(WaitToRetry(call, std::move(outcome), ctx));
  }
}

// Before each attempt: not cancelled, time left.
Status GeminiClient::CheckAttemptAllowed(const CallState& call, const CallContext& ctx) const {
  if (ctx.cancel.stop_requested()) {
    return MakeError(ErrorCode::kCancelled,
                     call.WithLast("the Gemini call was cancelled after " +
                                   Plural(call.attempts, "attempt") + "; nothing was produced."));
  }
  const auto now = sleeper_->Now();
  if (now >= call.deadline) {
    return MakeError(
        ErrorCode::kDeadlineExceeded,
        call.WithLast("the Gemini call ran out of time (" + SecondsText(now - call.start) +
                      ") after " + Plural(call.attempts, "attempt") + "."));
  }
  return Status::Ok();
}

// One POST and its classification. An error return ends the call (cancelled, out of time); an
// outcome without an image may be retried.
Result<GeminiClient::AttemptOutcome> GeminiClient::Attempt(CallState& call, const std::string& path,
                                                           const std::string& body,
                                                           const CallContext& ctx) {
  const int max_attempts = options_.retry.max_attempts;
  // The watcher in PostJson measures real time; carry the remaining budget over to it.
  const auto now = sleeper_->Now();
  const auto real_deadline = call.deadline == std::chrono::steady_clock::time_point::max()
                                 ? call.deadline
                                 : std::chrono::steady_clock::now() + (call.deadline - now);
  HttpFailure http_failure;
  call.credential_failed = false;
  auto answer = PostAuthorized(call, path, body, ctx, real_deadline, &http_failure);
  const std::string attempt_of =
      std::to_string(call.attempts) + " of " + std::to_string(max_attempts);
  if (!answer.ok() && call.credential_failed && http_failure.stop == HttpStop::kDeadline) {
    // The token endpoint (named in the error) did not answer in time, not Gemini.
    return MakeError(
        ErrorCode::kDeadlineExceeded,
        call.WithLast(answer.error().message + " (" + SecondsText(sleeper_->Now() - call.start) +
                      ", attempt " + attempt_of + "). Try again later or allow more time."));
  }
  if (!answer.ok()) {
    if (http_failure.stop == HttpStop::kCancelled) {
      return MakeError(ErrorCode::kCancelled,
                       call.WithLast("the Gemini call was cancelled during attempt " + attempt_of +
                                     "; nothing was produced."));
    }
    if (http_failure.stop == HttpStop::kDeadline) {
      return MakeError(ErrorCode::kDeadlineExceeded,
                       call.WithLast("Gemini did not answer before the call deadline (" +
                                     SecondsText(sleeper_->Now() - call.start) + ", attempt " +
                                     attempt_of + "). Try again later or allow more time."));
    }
    return TransportFailure(answer.error(), http_failure);
  }
  // An error body may echo the request's headers: redact the credentials before any of it is
  // quoted (and cut to length, which would leave a piece no redaction recognises).
  if (answer->status != 200) RedactSecrets(answer->body, Secrets());
  return ClassifyAnswer(*answer);
}

Result<HttpAnswer> GeminiClient::PostAuthorized(CallState& call, const std::string& path,
                                                const std::string& body, const CallContext& ctx,
                                                std::chrono::steady_clock::time_point deadline,
                                                HttpFailure* failure) {
  while (true) {
    *failure = HttpFailure{};
    auto credential = auth_->Credential(ctx.cancel, deadline);
    if (!credential.ok()) {
      call.credential_failed = true;
      if (credential.error().code == ErrorCode::kCancelled) failure->stop = HttpStop::kCancelled;
      if (credential.error().code == ErrorCode::kDeadlineExceeded) {
        failure->stop = HttpStop::kDeadline;
      }
      return credential.error();
    }
    // Each attempt is a span of the client's trace, when it sent one.
    std::optional<HttpCallOptions> traced;
    if (auto parent = ParseTraceParent(ctx.traceparent)) {
      traced = http_options_;
      traced->traceparent = ChildTraceParent(*parent);
    }
    auto answer = post_(endpoint_, path, *credential, body, traced ? *traced : http_options_,
                        ctx.cancel, deadline, failure);
    if (!answer.ok() || answer->status != 401 || call.reauthorized ||
        !auth_->Rejected(*credential)) {
      return answer;
    }
    call.reauthorized = true;
    log::Info(kLog, "the access token was rejected (401); getting a fresh one and retrying once");
  }
}

// A request that got no answer: worth retrying unless the TLS certificate failed to verify.
GeminiClient::AttemptOutcome GeminiClient::TransportFailure(Error error,
                                                            const HttpFailure& http_failure) {
  AttemptOutcome out;
  out.failure.kind = (error.code == ErrorCode::kUnavailable && !http_failure.tls_verification)
                         ? FailureKind::kTransient
                         : FailureKind::kTerminal;
  out.what = error.message;
  if (out.failure.kind == FailureKind::kTransient) error.message += ". Retrying later may help.";
  out.error = std::move(error);
  return out;
}

// An answer: the image, or why not (the retry policy reads the failure kind).
GeminiClient::AttemptOutcome GeminiClient::ClassifyAnswer(const HttpAnswer& answer) {
  AttemptOutcome out;
  ResponseInfo info;
  Result<BackendImage> image = ParseGenerateResponse(answer.status, answer.body, &info);
  if (image.ok()) {
    out.image = std::move(*image);
    return out;
  }
  out.error = image.error();
  out.failure = info.failure;
  if (answer.status != 200) {
    out.what = "Gemini returned " + std::to_string(answer.status) +
               (info.api_status.empty() ? "" : " (" + info.api_status + ")");
  } else if (!info.finish_reason.empty() && info.finish_reason != "STOP") {
    out.what = "Gemini finished without an image (" + info.finish_reason + ")";
  } else {
    out.what = "Gemini returned an unusable answer";
  }
  return out;
}

namespace {

// What the retry metric calls the failure an attempt is retried after (metrics/metrics.h).
std::string_view RetryCause(const AttemptFailure& failure, const std::string& what) {
  if (failure.http_status == 429) return metrics::kRetryRateLimited;
  if (failure.http_status >= 500) return metrics::kRetryServerError;
  if (failure.http_status == 408) return metrics::kRetryTimeout;
  if (failure.http_status == 0 && failure.kind == FailureKind::kTransient) {
    // http_call.cpp's messages for a connect or read that ran out of time.
    return what.find("timed out") != std::string::npos ? metrics::kRetryTimeout
                                                       : metrics::kRetryTransport;
  }
  return metrics::kRetryUnusable;
}

}  // namespace

// After a failed attempt: the error when the policy says not to retry (or the next attempt
// would pass the deadline); else a progress line and the backoff, cut short by a cancel.
Status GeminiClient::WaitToRetry(CallState& call, AttemptOutcome outcome, const CallContext& ctx) {
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  const RetryDecision decision = DecideRetry(outcome.failure, call.attempts, call.retry_once_used,
                                             options_.retry, unit(call.rng));
  Error& error = outcome.error;
  if (!decision.retry) {
    if (!decision.why_not.empty() && error.message.find("daily quota") == std::string::npos) {
      error.message += " Not retrying: " + decision.why_not + ".";
    }
    log::Warn(kLog, Scrub(error).message);
    return error;
  }
  if (outcome.failure.kind == FailureKind::kRetryOnce) call.retry_once_used = true;
  call.last_error = error.message;
  if (sleeper_->Now() + decision.delay >= call.deadline) {
    return MakeError(ErrorCode::kDeadlineExceeded,
                     call.WithLast("gave up on Gemini after " + Plural(call.attempts, "attempt") +
                                   ": the next retry (in " + FormatDelay(decision.delay) +
                                   ") would pass the call deadline."));
  }
  if (options_.metrics != nullptr) {
    options_.metrics->RecordBackendRetry(Name(), RetryCause(outcome.failure, outcome.what));
  }
  const std::string progress = outcome.what + "; retrying in " + FormatDelay(decision.delay) +
                               " (attempt " + std::to_string(call.attempts + 1) + " of " +
                               std::to_string(options_.retry.max_attempts) + ")";
  const std::string scrubbed = Scrub(Error(ErrorCode::kUnavailable, progress)).message;
  log::Info(kLog, scrubbed);
  if (ctx.on_progress) ctx.on_progress(scrubbed);
  if (!sleeper_->SleepFor(decision.delay, ctx.cancel)) {
    return MakeError(ErrorCode::kCancelled,
                     call.WithLast("the Gemini call was cancelled while waiting to retry (after " +
                                   Plural(call.attempts, "attempt") + "); nothing was produced."));
  }
  return Status::Ok();
}

std::string SystemCaBundleIfPresent() {
  std::error_code ec;
  return std::filesystem::exists(kSystemCaBundle, ec) ? kSystemCaBundle : "";
}

}  // namespace imgmcp::gemini
