#include "metrics/prometheus_metrics.h"

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>
#include <prometheus/text_serializer.h>

#include <cstring>
#include <functional>
#include <initializer_list>
#include <unordered_map>
#include <utility>
#include <vector>

#include "common/thread_annotations.h"

namespace imgmcp::metrics {
namespace {

using prometheus::BuildCounter;
using prometheus::BuildGauge;
using prometheus::BuildHistogram;
using prometheus::Counter;
using prometheus::Gauge;
using prometheus::Histogram;

constexpr std::string_view kOther = "other";

// OpenTelemetry's advice for MCP operation durations, in seconds.
const Histogram::BucketBoundaries& DurationBuckets() {
  static const Histogram::BucketBoundaries buckets{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1,
                                                   2.5,   5,    10,    30,   60,  120,  300};
  return buckets;
}

// The series of one family, by label values, created on first use and found again through a map
// of their joined values (cheaper than the family's own lookup, which builds a label map). At
// most kMaxSeriesPerFamily label sets; beyond that every value is recorded as "other".
template <typename Metric>
class Series {
 public:
  using Make = std::function<Metric&(prometheus::Family<Metric>&, const prometheus::Labels&)>;

  Series(prometheus::Family<Metric>& family, std::vector<std::string> names, Make make)
      : family_(family), names_(std::move(names)), make_(std::move(make)) {}

  Metric& Get(std::initializer_list<std::string_view> values) {
    // The lookup key, the values joined, is built in place: no allocation on the path every
    // call takes, unless the values are long.
    size_t size = 0;
    for (std::string_view v : values) size += v.size() + 1;
    char buffer[256];
    std::string spilled;
    char* out = buffer;
    if (size > sizeof(buffer)) {
      spilled.resize(size);
      out = spilled.data();
    }
    const std::string_view found_key(out, size);
    for (std::string_view v : values) {
      if (!v.empty()) std::memcpy(out, v.data(), v.size());  // an empty value may have no data()
      out += v.size();
      *out++ = '\x1f';
    }
    MutexLock lock(mu_);
    if (auto it = children_.find(found_key); it != children_.end()) return *it->second;
    const bool full = children_.size() >= kMaxSeriesPerFamily;
    prometheus::Labels labels;
    size_t i = 0;
    for (std::string_view v : values) {
      labels.emplace(names_[i++], full && !v.empty() ? std::string(kOther) : std::string(v));
    }
    Metric& metric = make_(family_, labels);
    if (!full) children_.emplace(std::string(found_key), &metric);
    return metric;
  }

 private:
  prometheus::Family<Metric>& family_;
  const std::vector<std::string> names_;
  const Make make_;
  Mutex mu_;  // guards children_
  // Transparent hash and equality: found by a string_view without building a std::string.
  struct KeyHash {
    using is_transparent = void;
    size_t operator()(std::string_view key) const { return std::hash<std::string_view>{}(key); }
  };
  std::unordered_map<std::string, Metric*, KeyHash, std::equal_to<>> children_ GUARDED_BY(mu_);
};

template <typename Metric>
Metric& AddPlain(prometheus::Family<Metric>& family, const prometheus::Labels& labels) {
  return family.Add(labels);
}

Histogram& AddDuration(prometheus::Family<Histogram>& family, const prometheus::Labels& labels) {
  return family.Add(labels, DurationBuckets());
}

// The registry and its families.
struct Families {
  prometheus::Registry registry;

  Series<Histogram> operations{
      BuildHistogram()
          .Name("mcp_server_operation_duration_seconds")
          .Help("MCP request duration as observed on the server, from receipt to the answer")
          .Register(registry),
      {"mcp_method_name", "gen_ai_tool_name", "error_type"},
      AddDuration};
  Series<Counter> backend_calls{BuildCounter()
                                    .Name("imgmcp_backend_calls_total")
                                    .Help("Image backend calls (all attempts of one call), by "
                                          "outcome: ok or the error's kind")
                                    .Register(registry),
                                {"backend", "outcome"},
                                AddPlain<Counter>};
  Series<Histogram> backend_duration{
      BuildHistogram()
          .Name("imgmcp_backend_call_duration_seconds")
          .Help("Image backend call duration, retries and their waits included")
          .Register(registry),
      {"backend"},
      AddDuration};
  Series<Counter> backend_retries{BuildCounter()
                                      .Name("imgmcp_backend_retries_total")
                                      .Help("Backend attempts repeated after a failed one, by "
                                            "cause: 429, 5xx, timeout, transport, unusable_answer")
                                      .Register(registry),
                                  {"backend", "cause"},
                                  AddPlain<Counter>};
  Histogram& turn_wait = BuildHistogram()
                             .Name("imgmcp_session_turn_wait_seconds")
                             .Help("How long an edit waited for its session's turn")
                             .Register(registry)
                             .Add({}, DurationBuckets());
  Counter& versions = BuildCounter()
                          .Name("imgmcp_versions_committed_total")
                          .Help("Versions committed to the session store")
                          .Register(registry)
                          .Add({});
  Counter& bytes = BuildCounter()
                       .Name("imgmcp_stored_bytes_total")
                       .Help("Bytes of image data committed to the session store")
                       .Register(registry)
                       .Add({});
  prometheus::Family<Counter>& image_cache =
      BuildCounter()
          .Name("imgmcp_image_cache_requests_total")
          .Help(
              "Reads of a version's image bytes, by result: hit (in this process's image "
              "cache) or miss (read from the session store)")
          .Register(registry);
  Counter& image_cache_hits = image_cache.Add({{"result", "hit"}});
  Counter& image_cache_misses = image_cache.Add({{"result", "miss"}});
  prometheus::Family<Gauge>& pool = BuildGauge()
                                        .Name("imgmcp_store_pool_connections")
                                        .Help(
                                            "Session store connections: in_use, or callers "
                                            "waiting for one")
                                        .Register(registry);
  Gauge& pool_in_use = pool.Add({{"state", "in_use"}});
  Gauge& pool_waiting = pool.Add({{"state", "waiting"}});
  Gauge& http_sessions = BuildGauge()
                             .Name("imgmcp_http_sessions_open")
                             .Help("Open legacy HTTP sessions (Mcp-Session-Id)")
                             .Register(registry)
                             .Add({});
  Gauge& sse_streams = BuildGauge()
                           .Name("imgmcp_sse_streams_open")
                           .Help("Server-sent event streams being written")
                           .Register(registry)
                           .Add({});
  Series<Counter> task_statuses{BuildCounter()
                                    .Name("imgmcp_tasks_total")
                                    .Help("Tasks this process created or ran, by the status they "
                                          "reached: working (created), input_required, "
                                          "completed, failed, cancelled")
                                    .Register(registry),
                                {"status"},
                                AddPlain<Counter>};
  Series<Counter> spend{BuildCounter()
                            .Name("imgmcp_spend_usd_total")
                            .Help("US dollars the backend calls cost, by the model whose prices "
                                  "were used")
                            .Register(registry),
                        {"model"},
                        AddPlain<Counter>};
  Series<Counter> tokens{BuildCounter()
                             .Name("imgmcp_tokens_total")
                             .Help("Tokens the backend reported, by model and kind: input, "
                                   "output_image, output_text, thoughts")
                             .Register(registry),
                         {"model", "kind"},
                         AddPlain<Counter>};
  Series<Counter> budget_refusals{BuildCounter()
                                      .Name("imgmcp_budget_refusals_total")
                                      .Help("Calls refused before any request by a budget "
                                            "(per_day, per_user_day, per_session) or their "
                                            "max_cost_usd "
                                            "(max_cost)")
                                      .Register(registry),
                                  {"budget"},
                                  AddPlain<Counter>};
  Series<Counter> gate_rejections{BuildCounter()
                                      .Name("imgmcp_http_gate_rejections_total")
                                      .Help("Connections refused or closed by the connection gate "
                                            "before a worker saw them, by reason")
                                      .Register(registry),
                                  {"reason"},
                                  AddPlain<Counter>};
};

// The Metrics of a process that serves them: one prometheus-cpp registry.
class PrometheusMetrics final : public Metrics {
 public:
  PrometheusMetrics() : families_(std::make_unique<Families>()) {}

  void RecordOperation(std::string_view method, std::string_view tool, std::string_view error_type,
                       double seconds) override;
  void RecordBackendCall(std::string_view backend, std::string_view outcome,
                         double seconds) override;
  void RecordBackendRetry(std::string_view backend, std::string_view cause) override;
  void RecordTurnWait(double seconds) override;
  void RecordCommit(int64_t versions, int64_t bytes) override;
  void RecordImageCacheLookup(bool hit) override;
  void SetStorePool(int64_t in_use, int64_t waiting) override;
  void RecordTaskStatus(std::string_view status) override;
  void RecordSpend(std::string_view model, double usd, int64_t input_tokens,
                   int64_t output_image_tokens, int64_t output_text_tokens,
                   int64_t thoughts_tokens) override;
  void RecordBudgetRefusal(std::string_view budget) override;
  void SetOpenHttpSessions(int64_t count) override;
  void SetOpenSseStreams(int64_t count) override;
  void RecordGateRejection(std::string_view reason) override;
  std::string Render() const override;

 private:
  std::unique_ptr<Families> families_;
};

}  // namespace

std::unique_ptr<Metrics> NewPrometheusMetrics() { return std::make_unique<PrometheusMetrics>(); }

void PrometheusMetrics::RecordOperation(std::string_view method, std::string_view tool,
                                        std::string_view error_type, double seconds) {
  families_->operations.Get({method, tool, error_type}).Observe(seconds);
}

void PrometheusMetrics::RecordBackendCall(std::string_view backend, std::string_view outcome,
                                          double seconds) {
  families_->backend_calls.Get({backend, outcome}).Increment();
  families_->backend_duration.Get({backend}).Observe(seconds);
}

void PrometheusMetrics::RecordBackendRetry(std::string_view backend, std::string_view cause) {
  families_->backend_retries.Get({backend, cause}).Increment();
}

void PrometheusMetrics::RecordTurnWait(double seconds) { families_->turn_wait.Observe(seconds); }

void PrometheusMetrics::RecordCommit(int64_t versions, int64_t bytes) {
  families_->versions.Increment(static_cast<double>(versions));
  families_->bytes.Increment(static_cast<double>(bytes));
}

void PrometheusMetrics::RecordImageCacheLookup(bool hit) {
  (hit ? families_->image_cache_hits : families_->image_cache_misses).Increment();
}

void PrometheusMetrics::SetStorePool(int64_t in_use, int64_t waiting) {
  families_->pool_in_use.Set(static_cast<double>(in_use));
  families_->pool_waiting.Set(static_cast<double>(waiting));
}

void PrometheusMetrics::RecordTaskStatus(std::string_view status) {
  families_->task_statuses.Get({status}).Increment();
}

void PrometheusMetrics::RecordSpend(std::string_view model, double usd, int64_t input_tokens,
                                    int64_t output_image_tokens, int64_t output_text_tokens,
                                    int64_t thoughts_tokens) {
  families_->spend.Get({model}).Increment(usd);
  const std::pair<std::string_view, int64_t> kinds[] = {{"input", input_tokens},
                                                        {"output_image", output_image_tokens},
                                                        {"output_text", output_text_tokens},
                                                        {"thoughts", thoughts_tokens}};
  for (const auto& [kind, count] : kinds) {
    if (count > 0) families_->tokens.Get({model, kind}).Increment(static_cast<double>(count));
  }
}

void PrometheusMetrics::RecordBudgetRefusal(std::string_view budget) {
  families_->budget_refusals.Get({budget}).Increment();
}

void PrometheusMetrics::SetOpenHttpSessions(int64_t count) {
  families_->http_sessions.Set(static_cast<double>(count));
}

void PrometheusMetrics::SetOpenSseStreams(int64_t count) {
  families_->sse_streams.Set(static_cast<double>(count));
}

void PrometheusMetrics::RecordGateRejection(std::string_view reason) {
  families_->gate_rejections.Get({reason}).Increment();
}

std::string PrometheusMetrics::Render() const {
  return prometheus::TextSerializer().Serialize(families_->registry.Collect());
}

}  // namespace imgmcp::metrics
