#include "gemini_client/http_call.h"

#include <httplib.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>

namespace imgmcp::gemini {
namespace {

constexpr size_t kWriteChunk =
    1 << 20;  // request body is streamed from our buffer, 1 MiB at a time

std::string DescribeHttpError(httplib::Error error, const Endpoint& endpoint) {
  const std::string where = " (" + endpoint.scheme_host_port + ")";
  switch (error) {
    case httplib::Error::Connection:
      return "could not connect to Gemini" + where;
    case httplib::Error::ConnectionTimeout:
      return "timed out connecting to Gemini" + where;
    case httplib::Error::Read:
      return "the connection to Gemini failed while reading the answer (timed out or closed "
             "early)" +
             where;
    case httplib::Error::Write:
      return "the connection to Gemini failed while sending the request" + where;
    case httplib::Error::SSLConnection:
      return "the TLS handshake with Gemini failed" + where;
    case httplib::Error::SSLLoadingCerts:
      return "could not load the system CA certificates to verify Gemini" + where;
    case httplib::Error::SSLServerVerification:
      return "Gemini's TLS certificate could not be verified" + where;
    case httplib::Error::Canceled:
      return "the request to Gemini was aborted" + where;
    default:
      return "the HTTP request to Gemini failed: " + httplib::to_string(error) + where;
  }
}

// Aborts the request's socket when the call is cancelled or its deadline passes: the only way to
// interrupt a blocked read in httplib. Its thread sleeps until one of the two (a stop of the
// token wakes it) or until the request is done, and never polls. httplib's stop() does nothing
// before the request has its socket, so the body writer also checks stop() before each chunk: a
// stop that comes before the connection exists ends the request at its first write. (httplib
// connects while holding the lock stop() takes, so a stop during a connect takes effect when the
// connect finishes: at most the connect timeout.) Joins on Finish or destruction.
class AbortWatcher {
 public:
  AbortWatcher(httplib::Client& client, std::stop_token cancel,
               std::chrono::steady_clock::time_point deadline)
      : thread_([this, &client, cancel, deadline] { Run(client, cancel, deadline); }) {}
  ~AbortWatcher() { Finish(); }
  AbortWatcher(const AbortWatcher&) = delete;
  AbortWatcher& operator=(const AbortWatcher&) = delete;

  void Finish() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      done_ = true;
    }
    cv_.notify_all();
    if (thread_.joinable()) thread_.join();
  }
  HttpStop stop() const { return stop_.load(); }

 private:
  void Run(httplib::Client& client, std::stop_token cancel,
           std::chrono::steady_clock::time_point deadline) {
    std::unique_lock<std::mutex> lock(mutex_);
    const auto done = [this] { return done_; };
    const bool finished = deadline == std::chrono::steady_clock::time_point::max()
                              ? cv_.wait(lock, cancel, done)
                              : cv_.wait_until(lock, cancel, deadline, done);
    if (finished) return;
    stop_ = cancel.stop_requested() ? HttpStop::kCancelled : HttpStop::kDeadline;
    lock.unlock();
    client.stop();
  }

  std::mutex mutex_;  // guards done_
  std::condition_variable_any cv_;
  bool done_ = false;
  std::atomic<HttpStop> stop_{HttpStop::kNone};  // atomic: read by the request thread
  std::thread thread_;                           // last: starts after the fields above exist
};

}  // namespace

Result<HttpAnswer> PostJson(const Endpoint& endpoint, const std::string& path,
                            const std::string& api_key, const std::string& body,
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
    // Per-wait timeouts: never longer than the time left before the deadline.
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
      if (!options.ca_cert_path.empty()) client.set_ca_cert_path(options.ca_cert_path);
    }

    const httplib::Headers headers = {
        {"x-goog-api-key", api_key},
        {"Accept", "application/json"},
        {"User-Agent", "imgmcp-gemini-client"},
    };

    AbortWatcher watcher(client, cancel, deadline);
    httplib::Result result = client.Post(
        endpoint.path_prefix + path, headers, body.size(),
        [&](size_t offset, size_t length, httplib::DataSink& sink) {
          if (watcher.stop() != HttpStop::kNone) return false;
          return sink.write(body.data() + offset, std::min(length, kWriteChunk));
        },
        "application/json");
    watcher.Finish();

    failure->stop = watcher.stop();
    if (failure->stop == HttpStop::kCancelled) {
      return MakeError(ErrorCode::kCancelled, "the request was cancelled while waiting for Gemini");
    }
    if (failure->stop == HttpStop::kDeadline) {
      return MakeError(ErrorCode::kDeadlineExceeded,
                       "the call deadline passed while waiting for Gemini");
    }
    if (!result) {
      const httplib::Error error = result.error();
      failure->tls_verification = error == httplib::Error::SSLServerVerification ||
                                  error == httplib::Error::SSLLoadingCerts;
      return MakeError(ErrorCode::kUnavailable, DescribeHttpError(error, endpoint));
    }
    HttpAnswer answer;
    answer.status = result->status;
    answer.body = std::move(result->body);
    return answer;
  } catch (const std::exception& e) {
    // httplib and the standard library may throw (bad_alloc on a huge body, system_error).
    return MakeError(ErrorCode::kInternal,
                     std::string("the HTTP request to Gemini failed unexpectedly: ") + e.what());
  }
}

}  // namespace imgmcp::gemini
