#include "gemini_client/http_call.h"

#include <httplib.h>

#include <algorithm>
#include <atomic>
#include <functional>
#include <optional>
#include <stop_token>

#include "common/decimal.h"
#include "gemini_client/proxy_probe.h"

namespace imgmcp::gemini {
namespace {

// How long the proxy is given to say why a call through it failed (proxy_probe.h).
constexpr std::chrono::milliseconds kProxyProbeTimeout{5'000};

Error ProxyRefusal(const ProxyServer& proxy, int status) {
  return MakeError(ErrorCode::kPermissionDenied,
                   "the proxy " + proxy.host + ":" + std::to_string(proxy.port) +
                       " refused the request (" + std::to_string(status) +
                       (status == 407 ? " Proxy Authentication Required" : " Unauthorized") +
                       "); check the user and password in HTTPS_PROXY/HTTP_PROXY");
}

// Before a call tunnels through `proxy` (https targets): the proxy must agree to open the tunnel.
// The HTTP client (cpp-httplib 0.11) deadlocks on its own socket mutex when a CONNECT is refused
// with "Connection: close", as tinyproxy does for a wrong password; such a call could never end
// nor be cancelled. So the tunnel is asked for here first, and a refusal is this call's error.
Status CheckTunnel(const ProxyServer& proxy, const Endpoint& endpoint,
                   std::chrono::steady_clock::time_point deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
      deadline - std::chrono::steady_clock::now());
  const std::string target = EndpointHostPort(endpoint);
  const int status = ProbeProxyStatus(
      proxy, target, std::clamp(left, std::chrono::milliseconds(1), kProxyProbeTimeout));
  if (status == 200) return Status::Ok();
  if (IsProxyAuthRefusal(status)) return ProxyRefusal(proxy, status);
  const std::string where = "the proxy " + proxy.host + ":" + std::to_string(proxy.port);
  if (status == 0) {
    return MakeError(ErrorCode::kUnavailable,
                     where + " did not answer a request to open a tunnel to " + target);
  }
  return MakeError(status == 403 ? ErrorCode::kPermissionDenied : ErrorCode::kUnavailable,
                   where + " refused to open a tunnel to " + target + " (status " +
                       std::to_string(status) + ")");
}

// After a call through `proxy` failed without an answer of its own (or with a 401/407 that may
// be the proxy's): the proxy's refusal, if that is what happened.
std::optional<Error> AskProxyWhy(const ProxyServer& proxy, const Endpoint& endpoint,
                                 std::chrono::steady_clock::time_point deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
      deadline - std::chrono::steady_clock::now());
  if (left <= std::chrono::milliseconds(0)) return std::nullopt;
  const int status =
      ProbeProxyStatus(proxy, EndpointHostPort(endpoint), std::min(left, kProxyProbeTimeout));
  if (!IsProxyAuthRefusal(status)) return std::nullopt;
  return ProxyRefusal(proxy, status);
}

constexpr size_t kWriteChunk =
    1 << 20;  // request body is streamed from our buffer, 1 MiB at a time

std::string DescribeHttpError(httplib::Error error, const Endpoint& endpoint,
                              const std::string& peer, bool proxied) {
  const std::string where =
      " (" + endpoint.scheme_host_port + (proxied ? ", through the proxy" : "") + ")";
  const std::string& Gemini = peer;  // the messages below name the peer
  switch (error) {
    case httplib::Error::Connection:
      return "could not connect to " + Gemini + where;
    case httplib::Error::ConnectionTimeout:
      return "timed out connecting to " + Gemini + where;
    case httplib::Error::Read:
      return "the connection to " + Gemini +
             " failed while reading the answer (timed out or closed early)" + where;
    case httplib::Error::Write:
      return "the connection to " + Gemini + " failed while sending the request" + where;
    case httplib::Error::SSLConnection:
      return "the TLS handshake with " + Gemini + " failed" + where;
    case httplib::Error::SSLLoadingCerts:
      return "could not load the CA certificates to verify " + Gemini + where;
    case httplib::Error::SSLServerVerification:
      return "the TLS certificate of " + Gemini + " could not be verified" + where;
    case httplib::Error::Canceled:
      return "the request to " + Gemini + " was aborted" + where;
    default:
      return "the HTTP request to " + Gemini + " failed: " + httplib::to_string(error) + where;
  }
}

// Stops a call's HTTP client when the call is cancelled (a stop callback, run by whoever cancels)
// or its deadline passes (a timer of HttpCallOptions::timers; without one, the sockets' timeouts,
// clipped to the deadline, bound the call): client.stop() shuts its socket, so a blocked read or
// write returns at once — the only way to interrupt a blocked read in httplib. stop() does nothing
// before the request has its socket, so the body writer also checks stop() before each chunk: a
// stop that comes before the connection exists ends the request at its first write.
// (httplib connects while holding the lock stop() takes, so a stop during a connect takes effect
// when the connect finishes: at most the connect timeout.) No thread of its own. Finish (or
// destruction) waits for an abort in progress and makes sure none comes later.
class AbortWatcher {
 public:
  AbortWatcher(httplib::Client& client, std::stop_token cancel,
               std::chrono::steady_clock::time_point deadline, TimerThread* timers)
      : client_(client) {
    if (timers != nullptr && deadline != std::chrono::steady_clock::time_point::max()) {
      timers_ = timers;
      timer_ = timers->Schedule(deadline, [this] { Abort(HttpStop::kDeadline); });
    }
    on_cancel_.emplace(std::move(cancel), [this] { Abort(HttpStop::kCancelled); });
  }
  ~AbortWatcher() { Finish(); }
  AbortWatcher(const AbortWatcher&) = delete;
  AbortWatcher& operator=(const AbortWatcher&) = delete;

  void Finish() {
    on_cancel_.reset();  // waits for a cancel's abort running now
    if (timers_ != nullptr) timers_->Cancel(timer_);
    timers_ = nullptr;
  }
  HttpStop stop() const { return stop_.load(); }

 private:
  void Abort(HttpStop why) {
    HttpStop none = HttpStop::kNone;
    if (stop_.compare_exchange_strong(none, why)) client_.stop();
  }

  httplib::Client& client_;
  std::atomic<HttpStop> stop_{HttpStop::kNone};  // atomic: read by the request thread
  TimerThread* timers_ = nullptr;
  TimerThread::Id timer_ = 0;
  // Last: it may run Abort at once, when the call was cancelled before it began.
  std::optional<std::stop_callback<std::function<void()>>> on_cancel_;
};

// Trusts ca_cert_path (or OpenSSL's default paths) and extra_ca_file together: httplib takes
// one store, so both go into it. False when a file cannot be loaded.
bool LoadCaStore(httplib::Client& client, const HttpCallOptions& options) {
  if (options.extra_ca_file.empty()) {
    if (!options.ca_cert_path.empty()) client.set_ca_cert_path(options.ca_cert_path);
    return true;
  }
  X509_STORE* store = X509_STORE_new();
  if (store == nullptr) return false;
  const bool base_ok =
      options.ca_cert_path.empty()
          ? X509_STORE_set_default_paths(store) == 1
          : X509_STORE_load_locations(store, options.ca_cert_path.c_str(), nullptr) == 1;
  const bool extra_ok =
      X509_STORE_load_locations(store, options.extra_ca_file.c_str(), nullptr) == 1;
  if (!base_ok || !extra_ok) {
    X509_STORE_free(store);
    return false;
  }
  client.set_ca_cert_store(store);  // the client's SSL context owns it from here
  return true;
}

// Timeouts (never past the deadline), TLS verification, CAs and the proxy.
Status ConfigureClient(httplib::Client& client, const Endpoint& endpoint,
                       const HttpCallOptions& options,
                       std::chrono::steady_clock::time_point deadline) {
  const auto now = std::chrono::steady_clock::now();
  auto clip = [&](std::chrono::milliseconds t) {
    if (deadline == std::chrono::steady_clock::time_point::max()) return t;
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now) +
                      std::chrono::milliseconds(1);
    return std::max(std::chrono::milliseconds(1), std::min(t, left));
  };
  client.set_connection_timeout(clip(options.connect_timeout));
  client.set_read_timeout(clip(options.read_timeout));
  client.set_write_timeout(clip(options.read_timeout));
  client.set_keep_alive(false);
  client.set_follow_location(false);
  if (endpoint.https) {
    client.enable_server_certificate_verification(true);
    if (!LoadCaStore(client, options)) {
      return MakeError(ErrorCode::kFailedPrecondition,
                       "could not load the CA bundle " + options.extra_ca_file +
                           " (--ca-file / SSL_CERT_FILE): not a readable PEM file");
    }
  }
  if (options.proxy.has_value()) {
    client.set_proxy(options.proxy->host, options.proxy->port);
    if (!options.proxy->username.empty()) {
      client.set_proxy_basic_auth(options.proxy->username, options.proxy->password);
    }
  }
  return Status::Ok();
}

// The answer's body as it arrives, up to `cap` bytes; past that, or when the Content-Length
// declares more, the read stops and `too_large` says why.
struct CappedBody {
  size_t cap = 0;
  std::string body;
  bool too_large = false;
  uint64_t declared = 0;  // the Content-Length that was over the cap, if one was
};

// httplib's request for `request`: its body streamed from the caller's buffer (checking for a
// stop before each chunk, see AbortWatcher), its answer read into `capped`.
httplib::Request BuildRequest(const Endpoint& endpoint, const HttpRequest& request,
                              const AbortWatcher& watcher, CappedBody& capped) {
  httplib::Request req;
  req.method = request.method == "GET" ? "GET" : "POST";
  req.path = endpoint.path_prefix + request.path;
  req.headers = {{"User-Agent", "imgmcp-gemini-client"}};
  for (const auto& [name, value] : request.headers) req.headers.emplace(name, value);
  if (req.method == "POST") {
    if (!request.content_type.empty()) req.headers.emplace("Content-Type", request.content_type);
    // What httplib's Post(path, headers, length, provider, type) sets up.
    req.content_length_ = request.body.size();
    req.content_provider_ = [&request, &watcher](size_t offset, size_t length,
                                                 httplib::DataSink& sink) {
      if (watcher.stop() != HttpStop::kNone) return false;
      return sink.write(request.body.data() + offset, std::min(length, kWriteChunk));
    };
    req.is_chunked_content_provider_ = false;
  }
  req.response_handler = [&capped](const httplib::Response& res) {
    if (!res.has_header("Content-Length")) return true;
    // Too many digits read as too large; a value that is no number is left to the receiver's cap.
    const uint64_t declared =
        ParseDecimalSaturating<uint64_t>(res.get_header_value("Content-Length")).value_or(0);
    if (declared > capped.cap) {
      capped.too_large = true;
      capped.declared = declared;
      return false;
    }
    capped.body.reserve(declared);  // one allocation, not a doubling string
    return true;
  };
  req.content_receiver = [&capped](const char* data, size_t size, uint64_t, uint64_t) {
    if (size > capped.cap - capped.body.size()) {
      capped.too_large = true;
      return false;
    }
    capped.body.append(data, size);
    return true;
  };
  return req;
}

Error TooLarge(const CappedBody& capped, const Endpoint& endpoint, const HttpRequest& request,
               bool proxied) {
  return MakeError(
      ErrorCode::kTooLarge,
      "the answer from " + request.peer + " (" + endpoint.scheme_host_port +
          (proxied ? ", through the proxy" : "") + ") is larger than " + FormatByteCap(capped.cap) +
          ", the most imgmcp accepts from it" +
          (capped.declared > 0 ? " (it declared " + std::to_string(capped.declared) + " bytes)"
                               : "") +
          "; it was refused, and retrying will not help");
}

// The answer, or why there is none.
Result<HttpAnswer> Conclude(const httplib::Response* result, httplib::Error error,
                            CappedBody& capped, HttpStop stop, const Endpoint& endpoint,
                            const HttpRequest& request, const HttpCallOptions& options,
                            std::chrono::steady_clock::time_point deadline, HttpFailure* failure) {
  failure->stop = stop;
  if (stop == HttpStop::kCancelled) {
    return MakeError(ErrorCode::kCancelled,
                     "the request was cancelled while waiting for " + request.peer);
  }
  if (stop == HttpStop::kDeadline) {
    return MakeError(ErrorCode::kDeadlineExceeded,
                     "the call deadline passed while waiting for " + request.peer);
  }
  if (capped.too_large) return TooLarge(capped, endpoint, request, options.proxy.has_value());
  if (result == nullptr) {
    failure->tls_verification =
        error == httplib::Error::SSLServerVerification || error == httplib::Error::SSLLoadingCerts;
    if (options.proxy.has_value() && !failure->tls_verification) {
      if (auto refusal = AskProxyWhy(*options.proxy, endpoint, deadline)) return *refusal;
    }
    return MakeError(ErrorCode::kUnavailable,
                     DescribeHttpError(error, endpoint, request.peer, options.proxy.has_value()));
  }
  if (options.proxy.has_value() && result->status == 407) {
    return ProxyRefusal(*options.proxy, 407);
  }
  if (options.proxy.has_value() && !endpoint.https && result->status == 401) {
    // Through a plain-HTTP proxy a 401 may be the proxy's own (tinyproxy's wrong password).
    if (auto refusal = AskProxyWhy(*options.proxy, endpoint, deadline)) return *refusal;
  }
  HttpAnswer answer;
  answer.status = result->status;
  answer.body = std::move(capped.body);
  return answer;
}

}  // namespace

Result<HttpAnswer> SendHttp(const Endpoint& endpoint, const HttpRequest& request,
                            const HttpCallOptions& options, std::stop_token cancel,
                            std::chrono::steady_clock::time_point deadline, HttpFailure* failure) {
  HttpFailure local_failure;
  if (failure == nullptr) failure = &local_failure;
  *failure = HttpFailure{};
  try {
    httplib::Client client(endpoint.scheme_host_port);
    if (!client.is_valid()) {
      return MakeError(ErrorCode::kInvalidArgument,
                       "could not set up an HTTP client for " + endpoint.scheme_host_port);
    }
    RETURN_IF_ERROR(ConfigureClient(client, endpoint, options, deadline));
    if (options.proxy.has_value() && endpoint.https) {
      RETURN_IF_ERROR(CheckTunnel(*options.proxy, endpoint, deadline));
    }
    CappedBody capped;
    capped.cap = request.max_answer_bytes;
    AbortWatcher watcher(client, cancel, deadline, options.timers);
    httplib::Request req = BuildRequest(endpoint, request, watcher, capped);
    httplib::Response res;
    httplib::Error error = httplib::Error::Success;
    const bool answered = client.send(req, res, error);
    watcher.Finish();
    return Conclude(answered ? &res : nullptr, error, capped, watcher.stop(), endpoint, request,
                    options, deadline, failure);
  } catch (const std::exception& e) {
    // httplib and the standard library may throw (bad_alloc on a huge body, system_error).
    return MakeError(ErrorCode::kInternal,
                     "the HTTP request to " + request.peer + " failed unexpectedly: " + e.what());
  }
}

Result<HttpAnswer> PostJson(const Endpoint& endpoint, const std::string& path,
                            const std::string& api_key, const std::string& body,
                            const HttpCallOptions& options, std::stop_token cancel,
                            std::chrono::steady_clock::time_point deadline, HttpFailure* failure) {
  HttpRequest request;
  request.path = path;
  request.content_type = "application/json";
  request.headers = {{"Accept", "application/json"}};
  if (!api_key.empty()) request.headers.emplace_back(options.auth_header, api_key);
  if (!options.traceparent.empty())
    request.headers.emplace_back("traceparent", options.traceparent);
  request.body = body;  // a view: a 100 MB request is not copied
  request.max_answer_bytes = kMaxGeminiAnswerBytes;
  return SendHttp(endpoint, request, options, cancel, deadline, failure);
}

}  // namespace imgmcp::gemini
