// metrics/prometheus_metrics.h: the names and labels GET /metrics shows, and the bound on label
// sets.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "metrics/prometheus_metrics.h"

namespace imgmcp::metrics {
namespace {

bool HasLine(const std::string& text, const std::string& line) {
  return text.find("\n" + line + "\n") != std::string::npos || text.rfind(line + "\n", 0) == 0;
}

TEST(MetricsTest, OperationsFollowTheOpenTelemetryMcpNames) {
  const std::unique_ptr<Metrics> owned = NewPrometheusMetrics();
  Metrics& metrics = *owned;
  metrics.RecordOperation("tools/call", "generate_image", "", 0.2);
  metrics.RecordOperation("tools/call", "generate_image", kToolError, 0.01);
  metrics.RecordOperation("tools/list", "", "", 0.001);
  metrics.RecordOperation("tools/call", "", "-32602", 0.001);
  const std::string text = metrics.Render();
  EXPECT_TRUE(HasLine(text, "# TYPE mcp_server_operation_duration_seconds histogram")) << text;
  EXPECT_TRUE(HasLine(text, R"(mcp_server_operation_duration_seconds_count{error_type="",)"
                            R"(gen_ai_tool_name="generate_image",mcp_method_name="tools/call"} 1)"))
      << text;
  EXPECT_TRUE(HasLine(text,
                      R"(mcp_server_operation_duration_seconds_count{error_type="tool_error",)"
                      R"(gen_ai_tool_name="generate_image",mcp_method_name="tools/call"} 1)"));
  EXPECT_TRUE(HasLine(text, R"(mcp_server_operation_duration_seconds_count{error_type="-32602",)"
                            R"(gen_ai_tool_name="",mcp_method_name="tools/call"} 1)"));
  EXPECT_TRUE(HasLine(text, R"(mcp_server_operation_duration_seconds_bucket{error_type="",)"
                            R"(gen_ai_tool_name="generate_image",mcp_method_name="tools/call",)"
                            R"(le="0.25"} 1)"))
      << text;
}

TEST(MetricsTest, EveryFamilyIsExposedWithItsLabelsOnly) {
  const std::unique_ptr<Metrics> owned = NewPrometheusMetrics();
  Metrics& metrics = *owned;
  metrics.RecordBackendCall("gemini", "ok", 1.5);
  metrics.RecordBackendRetry("gemini", kRetryRateLimited);
  metrics.RecordTurnWait(0.5);
  metrics.RecordCommit(2, 1000);
  metrics.RecordImageCacheLookup(true);
  metrics.RecordImageCacheLookup(true);
  metrics.RecordImageCacheLookup(false);
  metrics.SetStorePool(3, 1);
  metrics.SetOpenHttpSessions(4);
  metrics.SetOpenSseStreams(5);
  metrics.RecordGateRejection("408");
  metrics.RecordTaskStatus("working");
  metrics.RecordTaskStatus("completed");
  metrics.RecordTaskStatus("working");
  const std::string text = metrics.Render();
  for (const char* line : {
           R"(imgmcp_backend_calls_total{backend="gemini",outcome="ok"} 1)",
           R"(imgmcp_backend_call_duration_seconds_count{backend="gemini"} 1)",
           R"(imgmcp_backend_retries_total{backend="gemini",cause="429"} 1)",
           "imgmcp_session_turn_wait_seconds_count 1",
           "imgmcp_versions_committed_total 2",
           "imgmcp_stored_bytes_total 1000",
           R"(imgmcp_image_cache_requests_total{result="hit"} 2)",
           R"(imgmcp_image_cache_requests_total{result="miss"} 1)",
           R"(imgmcp_store_pool_connections{state="in_use"} 3)",
           R"(imgmcp_store_pool_connections{state="waiting"} 1)",
           "imgmcp_http_sessions_open 4",
           "imgmcp_sse_streams_open 5",
           R"(imgmcp_http_gate_rejections_total{reason="408"} 1)",
           R"(imgmcp_tasks_total{status="working"} 2)",
           R"(imgmcp_tasks_total{status="completed"} 1)",
       }) {
    EXPECT_TRUE(HasLine(text, line)) << line << "\n" << text;
  }
  // Nothing names a session: the label names are the vocabularies above.
  for (const char* word : {"session_id", "prompt", "token", "key"}) {
    EXPECT_EQ(text.find(std::string(word) + "=\""), std::string::npos) << word;
  }
}

TEST(MetricsTest, LabelSetsBeyondTheBoundAreCountedAsOther) {
  const std::unique_ptr<Metrics> owned = NewPrometheusMetrics();
  Metrics& metrics = *owned;
  for (size_t i = 0; i < kMaxSeriesPerFamily + 10; ++i) {
    metrics.RecordOperation("tools/call", "tool" + std::to_string(i), "", 0.001);
  }
  const std::string text = metrics.Render();
  EXPECT_TRUE(HasLine(text, R"(mcp_server_operation_duration_seconds_count{error_type="",)"
                            R"(gen_ai_tool_name="other",mcp_method_name="other"} 10)"))
      << text.substr(0, 2000);
  EXPECT_EQ(text.find("gen_ai_tool_name=\"tool" + std::to_string(kMaxSeriesPerFamily) + "\""),
            std::string::npos);
}

TEST(MetricsTest, LongLabelValuesKeepTheirOwnSeries) {
  // Label values longer than the in-place lookup key still find their own series again.
  const std::unique_ptr<Metrics> owned = NewPrometheusMetrics();
  Metrics& metrics = *owned;
  const std::string long_a(300, 'a');
  const std::string long_b = std::string(299, 'a') + "b";
  for (int i = 0; i < 3; ++i) metrics.RecordOperation("tools/call", long_a, "", 0.001);
  metrics.RecordOperation("tools/call", long_b, "", 0.001);
  const std::string text = metrics.Render();
  EXPECT_TRUE(HasLine(text, R"(mcp_server_operation_duration_seconds_count{error_type="",)"
                            R"(gen_ai_tool_name=")" +
                                long_a + R"(",mcp_method_name="tools/call"} 3)"));
  EXPECT_TRUE(HasLine(text, R"(mcp_server_operation_duration_seconds_count{error_type="",)"
                            R"(gen_ai_tool_name=")" +
                                long_b + R"(",mcp_method_name="tools/call"} 1)"));
}

TEST(MetricsTest, DefaultConstructedValuesAreEmptyLabels) {
  // A default string_view has no data(); it must still be a plain empty label value.
  const std::unique_ptr<Metrics> owned = NewPrometheusMetrics();
  Metrics& metrics = *owned;
  metrics.RecordOperation("ping", std::string_view{}, std::string_view{}, 0.001);
  EXPECT_TRUE(HasLine(metrics.Render(), R"(mcp_server_operation_duration_seconds_count{)"
                                        R"(error_type="",gen_ai_tool_name="",)"
                                        R"(mcp_method_name="ping"} 1)"));
}

TEST(MetricsTest, RecordingFromManyThreadsLosesNothing) {
  const std::unique_ptr<Metrics> owned = NewPrometheusMetrics();
  Metrics& metrics = *owned;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&metrics] {
      for (int i = 0; i < 1000; ++i) metrics.RecordOperation("ping", "", "", 0.0001);
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_TRUE(HasLine(metrics.Render(), R"(mcp_server_operation_duration_seconds_count{)"
                                        R"(error_type="",gen_ai_tool_name="",)"
                                        R"(mcp_method_name="ping"} 4000)"));
}

}  // namespace
}  // namespace imgmcp::metrics
