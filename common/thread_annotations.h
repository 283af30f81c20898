// Clang's thread-safety analysis (-Wthread-safety, on in every clang build: CMakeLists.txt), so
// that "guards …" is checked by the compiler, not only said in a comment. GUARDED_BY(mu) on a
// field makes every access without `mu` held an error; REQUIRES(mu) on a function makes every call
// without it one. Other compilers see empty macros.
//
// Mutex and SharedMutex are std::mutex and std::shared_mutex with the annotations libstdc++'s
// types lack. Lock them with MutexLock (or ReaderLock/WriterLock); wait with a
// std::condition_variable_any on the MutexLock, and begin a wait's predicate with
// `mu_.AssertHeld();` — a lambda is analysed on its own and does not know the lock is held.
#pragma once

#include <mutex>
#include <shared_mutex>

#if defined(__clang__)
#define IMGMCP_THREAD_ANNOTATION(x) __attribute__((x))
#else
#define IMGMCP_THREAD_ANNOTATION(x)
#endif

#define CAPABILITY(x) IMGMCP_THREAD_ANNOTATION(capability(x))
#define SCOPED_CAPABILITY IMGMCP_THREAD_ANNOTATION(scoped_lockable)
#define GUARDED_BY(x) IMGMCP_THREAD_ANNOTATION(guarded_by(x))
#define PT_GUARDED_BY(x) IMGMCP_THREAD_ANNOTATION(pt_guarded_by(x))
#define ACQUIRED_BEFORE(...) IMGMCP_THREAD_ANNOTATION(acquired_before(__VA_ARGS__))
#define ACQUIRED_AFTER(...) IMGMCP_THREAD_ANNOTATION(acquired_after(__VA_ARGS__))
#define REQUIRES(...) IMGMCP_THREAD_ANNOTATION(requires_capability(__VA_ARGS__))
#define REQUIRES_SHARED(...) IMGMCP_THREAD_ANNOTATION(requires_shared_capability(__VA_ARGS__))
#define ACQUIRE(...) IMGMCP_THREAD_ANNOTATION(acquire_capability(__VA_ARGS__))
#define ACQUIRE_SHARED(...) IMGMCP_THREAD_ANNOTATION(acquire_shared_capability(__VA_ARGS__))
#define RELEASE(...) IMGMCP_THREAD_ANNOTATION(release_capability(__VA_ARGS__))
#define RELEASE_SHARED(...) IMGMCP_THREAD_ANNOTATION(release_shared_capability(__VA_ARGS__))
#define RELEASE_GENERIC(...) IMGMCP_THREAD_ANNOTATION(release_generic_capability(__VA_ARGS__))
#define TRY_ACQUIRE(...) IMGMCP_THREAD_ANNOTATION(try_acquire_capability(__VA_ARGS__))
#define EXCLUDES(...) IMGMCP_THREAD_ANNOTATION(locks_excluded(__VA_ARGS__))
#define ASSERT_CAPABILITY(x) IMGMCP_THREAD_ANNOTATION(assert_capability(x))
#define ASSERT_SHARED_CAPABILITY(x) IMGMCP_THREAD_ANNOTATION(assert_shared_capability(x))
#define RETURN_CAPABILITY(x) IMGMCP_THREAD_ANNOTATION(lock_returned(x))
#define NO_THREAD_SAFETY_ANALYSIS IMGMCP_THREAD_ANNOTATION(no_thread_safety_analysis)

namespace imgmcp {

class CAPABILITY("mutex") Mutex {
 public:
  void lock() ACQUIRE() { mu_.lock(); }
  void unlock() RELEASE() { mu_.unlock(); }
  bool try_lock() TRY_ACQUIRE(true) { return mu_.try_lock(); }
  // Tells the analysis the mutex is held where it cannot see it (a condition variable's
  // predicate, which runs under the lock). Checks nothing at run time.
  void AssertHeld() const ASSERT_CAPABILITY(this) {}

 private:
  std::mutex mu_;
};

class CAPABILITY("shared mutex") SharedMutex {
 public:
  void lock() ACQUIRE() { mu_.lock(); }
  void unlock() RELEASE() { mu_.unlock(); }
  void lock_shared() ACQUIRE_SHARED() { mu_.lock_shared(); }
  void unlock_shared() RELEASE_SHARED() { mu_.unlock_shared(); }

 private:
  std::shared_mutex mu_;
};

// Holds a Mutex for its scope. Lockable itself (lock/unlock), so a std::condition_variable_any
// can wait on it.
class SCOPED_CAPABILITY MutexLock {
 public:
  explicit MutexLock(Mutex& mu) ACQUIRE(mu) : mu_(mu) { mu_.lock(); }
  ~MutexLock() RELEASE() {
    if (held_) mu_.unlock();
  }
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;

  void lock() ACQUIRE() {
    mu_.lock();
    held_ = true;
  }
  void unlock() RELEASE() {
    mu_.unlock();
    held_ = false;
  }

 private:
  Mutex& mu_;
  bool held_ = true;
};

// Holds a SharedMutex shared (readers) or exclusively (a writer) for its scope.
class SCOPED_CAPABILITY ReaderLock {
 public:
  explicit ReaderLock(SharedMutex& mu) ACQUIRE_SHARED(mu) : mu_(mu) { mu_.lock_shared(); }
  ~ReaderLock() RELEASE() { mu_.unlock_shared(); }
  ReaderLock(const ReaderLock&) = delete;
  ReaderLock& operator=(const ReaderLock&) = delete;

 private:
  SharedMutex& mu_;
};

class SCOPED_CAPABILITY WriterLock {
 public:
  explicit WriterLock(SharedMutex& mu) ACQUIRE(mu) : mu_(mu) { mu_.lock(); }
  ~WriterLock() RELEASE() { mu_.unlock(); }
  WriterLock(const WriterLock&) = delete;
  WriterLock& operator=(const WriterLock&) = delete;

 private:
  SharedMutex& mu_;
};

}  // namespace imgmcp
