// Commit latency and edits/s of the session store on the real disk (fsync included), with
// ~100 KB payloads: one session sequentially, one session contended by 16 threads, and 16
// sessions edited in parallel. Each benchmark uses its own temp data dir and removes it.
#include <benchmark/benchmark.h>
#include <stdlib.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "common/clock.h"
#include "common/log.h"
#include "session/session_store.h"
#include "session/sqlite/sqlite_session_store.h"

namespace imgmcp::session {
namespace {

constexpr size_t kPayloadBytes = 100 * 1024;

class BenchDir {
 public:
  BenchDir() {
    std::string templ = "/tmp/imgmcp-bench-session-XXXXXX";
    path_ = ::mkdtemp(templ.data()) != nullptr ? templ : "";
  }
  ~BenchDir() {
    std::error_code ec;
    if (!path_.empty()) std::filesystem::remove_all(path_, ec);
  }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

NewVersion Payload(int64_t parent, char fill) {
  NewVersion v;
  v.bytes.assign(kPayloadBytes, fill);
  v.mime_type = "image/png";
  v.file_extension = ".png";
  v.operation = parent == 0 ? "generate" : "edit";
  v.prompt = "benchmark edit";
  if (parent > 0) v.parent = parent;
  v.backend = "local";
  return v;
}

// Nanoseconds spent in Commit (file + fsyncs + row) and in the whole edit (queue wait included).
struct EditTimes {
  std::atomic<int64_t> commit_ns{0};
  std::atomic<int64_t> edit_ns{0};
};

int64_t NsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() -
                                                              start)
      .count();
}

// One edit: take the turn, read current, commit the next version.
bool Edit(SessionStore& store, const std::string& id, char fill, EditTimes& times) {
  const auto start = std::chrono::steady_clock::now();
  auto turn = store.AcquireTurn(id, {});
  if (!turn.ok()) return false;
  const auto cur = (*turn)->Current();
  NewVersion next = Payload(cur ? cur->version : 0, fill);
  const auto commit_start = std::chrono::steady_clock::now();
  const bool ok = (*turn)->Commit(next).ok();
  times.commit_ns += NsSince(commit_start);
  turn->reset();
  times.edit_ns += NsSince(start);
  return ok;
}

void ReportTimes(benchmark::State& state, const EditTimes& times, int64_t edits) {
  if (edits == 0) return;
  state.SetItemsProcessed(edits);
  state.counters["edits/s"] =
      benchmark::Counter(static_cast<double>(edits), benchmark::Counter::kIsRate);
  state.counters["commit_ms"] = static_cast<double>(times.commit_ns.load()) / 1e6 / edits;
  state.counters["edit_ms"] = static_cast<double>(times.edit_ns.load()) / 1e6 / edits;
}

std::unique_ptr<SessionStore> OpenStore(const BenchDir& dir, const Clock& clock,
                                        benchmark::State& state) {
  StoreOptions options;
  options.data_dir = dir.path();  // defaults: keep 100 versions (pruning included), 64 MiB cache
  auto store = session::sqlite::OpenSessionStore(options, clock);
  if (!store.ok()) {
    state.SkipWithError(store.error().message.c_str());
    return nullptr;
  }
  return std::move(*store);
}

// Sequential commits on one session: the time per iteration is the edit latency.
// Counters: commit_ms = mean time in Commit; edit_ms = mean time from AcquireTurn to release
// (includes waiting for the turn in the contended benchmarks).
void BM_CommitLatencyOneSession(benchmark::State& state) {
  BenchDir dir;
  SystemClock clock;
  auto store = OpenStore(dir, clock, state);
  if (!store) return;
  int64_t edits = 0;
  EditTimes times;
  for (auto _ : state) {
    if (!Edit(*store, "bench", static_cast<char>('a' + edits % 26), times)) {
      state.SkipWithError("edit failed");
      break;
    }
    ++edits;
  }
  state.SetBytesProcessed(edits * static_cast<int64_t>(kPayloadBytes));
  ReportTimes(state, times, edits);
}

// `threads` threads each doing `per_thread` edits per iteration, on one session (sessions == 1)
// or spread over `sessions` sessions.
void RunParallel(benchmark::State& state, int threads, int sessions, int per_thread) {
  BenchDir dir;
  SystemClock clock;
  auto store = OpenStore(dir, clock, state);
  if (!store) return;
  int64_t edits = 0;
  EditTimes times;
  std::atomic<bool> failed{false};
  for (auto _ : state) {
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t) {
      pool.emplace_back([&, t] {
        const std::string id = "bench" + std::to_string(t % sessions);
        for (int i = 0; i < per_thread; ++i) {
          if (!Edit(*store, id, static_cast<char>('a' + i % 26), times)) failed = true;
        }
      });
    }
    for (auto& th : pool) th.join();
    if (failed) {
      state.SkipWithError("edit failed");
      break;
    }
    edits += static_cast<int64_t>(threads) * per_thread;
  }
  ReportTimes(state, times, edits);
}

void BM_EditsOneSession16Threads(benchmark::State& state) { RunParallel(state, 16, 1, 8); }
void BM_Edits16Sessions16Threads(benchmark::State& state) { RunParallel(state, 16, 16, 8); }

BENCHMARK(BM_CommitLatencyOneSession)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_EditsOneSession16Threads)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_Edits16Sessions16Threads)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace imgmcp::session

BENCHMARK_MAIN();
