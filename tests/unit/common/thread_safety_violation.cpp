// Compiled (never linked) by the thread_safety_analysis tests (CMakeLists.txt here): a read of a
// GUARDED_BY field without its mutex must fail to compile in a clang tree, so "guards …" is really
// checked. With IMGMCP_HOLD_LOCK the read holds the lock and the file must compile cleanly, which
// shows the failure comes from the missing lock alone.
#include "common/thread_annotations.h"

namespace {

class Counter {
 public:
  int Read() {
#ifdef IMGMCP_HOLD_LOCK
    imgmcp::MutexLock lock(mu_);
#endif
    return value_;
  }

 private:
  imgmcp::Mutex mu_;  // guards value_
  int value_ GUARDED_BY(mu_) = 0;
};

}  // namespace

int ReadCounter() {
  Counter counter;
  return counter.Read();
}
