// Changes to tasks that this process's TaskRunner did not make (task_runner.h): rows written by
// another replica on the same store — created, finished, cancelled, settled after its runner
// died — and this process's cancels and settlings of another replica's tasks. The server
// (server.h) sends them to the connections listening for those tasks, as it does the runner's own
// changes (TaskRunner::OnChange), and wakes the runner's WaitTerminal calls waiting for them
// (TaskRunner::NoteChangedElsewhere). An interface, so the protocol core stays free of sessions
// (the adapter is server/tools/store_task_watch.h).
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "mcp/task_runner.h"

namespace imgmcp::mcp {

class TaskWatch {
 public:
  // What was announced: the task, its owner (task_runner.h) and the state it was written with.
  struct Change {
    std::string task_id;
    std::string owner;
    TaskState state = TaskState::kWorking;
  };
  // Reads the changed task as it is now (nullopt: it is gone or unreadable). Valid only during the
  // listener's call; it may block on the store, so a listener calls it only when someone listens.
  using Reader = std::function<std::optional<TaskSnapshot>()>;
  using Listener = std::function<void(const Change& change, const Reader& read)>;

  virtual ~TaskWatch() = default;
  // Reports each change to `listener`, one at a time, on a thread of the watch; nullptr stops the
  // reports and waits for one in progress. A listener must not call SetListener itself.
  virtual void SetListener(Listener listener) = 0;
};

}  // namespace imgmcp::mcp
