// Batch delivery (README.md, "Half price for work that can wait"; docs/design.md §3, "Batch
// tasks"): the store's batch poller on a thread of its own, and the work it hands tasks to — the
// generateContent body of a stored generate_image call, the commit of the job's answer through the
// tools' generate path (ImageTools::CommitBatchAnswer: the session's turn, the version, the cost
// at the batch price, the task's key), and the task's end in its row.
#pragma once

#include <condition_variable>
#include <memory>
#include <string>
#include <thread>

#include "common/clock.h"
#include "common/result.h"
#include "common/thread_annotations.h"
#include "gemini_client/batch_client.h"
#include "imaging/image_backend.h"
#include "server/app/batch_poller.h"
#include "server/tools/image_tools.h"
#include "server/tools/store_task_ledger.h"
#include "session/session_store.h"

namespace imgmcp::app {

// What batch delivery works with. The references must outlive it.
struct BatchDeliveryParts {
  session::SessionStore& store;          // the server's: sessions and task rows
  tools::StoreTaskLedger& ledger;        // ends tasks as tasks/get shows them
  tools::ImageTools& tools;              // parses calls, commits answers
  const imaging::ImageBackend& backend;  // the Gemini API backend: its model table
  std::unique_ptr<gemini::BatchClient> client;
  const imgmcp::Clock& clock;
  BatchPollerOptions options;
  // Between two rounds of the poller (a round acts only on what is due: windows, job reads).
  std::chrono::milliseconds tick{500};
};

class BatchDelivery final : public BatchTaskWork {
 public:
  explicit BatchDelivery(BatchDeliveryParts parts);
  ~BatchDelivery() override;  // stops the poller's thread and joins it
  BatchDelivery(const BatchDelivery&) = delete;
  BatchDelivery& operator=(const BatchDelivery&) = delete;

  // Starts the poller's thread on the opened store's batch task rows; a store that keeps none
  // (neither SQLite nor PostgreSQL) is logged and polled by nobody. Once; thread-safe.
  void Start(session::SessionStore& opened);

  Result<std::string> RequestBody(const session::TaskRecord& task) override;
  void Finish(const session::TaskRecord& task, const Result<gemini::BatchAnswer>& answer) override;
  void Progress(const session::TaskRecord& task, const std::string& message) override;

 private:
  struct Call;  // a stored call, read back
  Result<Call> Read(const session::TaskRecord& task) const;
  // Ends the task failed with `error`'s message (nothing was committed).
  void Fail(const session::TaskRecord& task, const Error& error);
  void Loop(std::stop_token stop);

  BatchDeliveryParts parts_;
  // Made by Start before it starts the thread; from then on the thread's alone.
  std::unique_ptr<BatchPoller> poller_;
  Mutex mu_;  // guards started_; the thread waits between rounds on wake_ with it
  bool started_ GUARDED_BY(mu_) = false;
  std::condition_variable_any wake_;
  std::jthread thread_;  // last: joined first
};

}  // namespace imgmcp::app
