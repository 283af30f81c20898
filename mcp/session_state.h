// SessionState: what one connection remembers between messages besides its requests in flight
// (json_rpc_connection.h) — the legacy session that initialize opens (negotiated version, client
// capabilities, log level, resources/subscribe, the 2025-11-25 tasks it created and the last
// status each was told), whose tasks it sees (the owner), and its subscriptions/listen streams
// with their filters. Handlers of the method table (method_handlers.h) read and change it; the
// connection's notifications ask it who wants them.
//
// Thread-safe. Each group of fields has its own mutex, and none is held while calling out —
// except `still_open`/`end_request` of AddListen/RemoveListen, which run under listens_mu_ so a
// stream's entry here and its request in flight come and go together (lock order: listens_mu_,
// then JsonRpcConnection's requests mutex).
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "common/json.h"
#include "common/thread_annotations.h"
#include "mcp/caller.h"
#include "mcp/log_level.h"
#include "mcp/protocol.h"

namespace imgmcp::mcp {

class SessionState {
 public:
  explicit SessionState(LogLevel default_log_level);
  SessionState(const SessionState&) = delete;
  SessionState& operator=(const SessionState&) = delete;

  // --- the legacy session's lifecycle ---------------------------------------------------------
  // initialize: opens the session with the negotiated version and the client's capabilities;
  // false when it was open already.
  bool Open(std::string protocol_version, Json client_capabilities);
  bool initialized() const;              // an initialize request was answered
  std::string protocol_version() const;  // negotiated; empty before initialize
  // The version and capabilities together, for a legacy request's scope ("" and {} before
  // initialize).
  void ReadContext(std::string* protocol_version, Json* client_capabilities) const;
  // True when the client declared `capability` at initialize.
  bool ClientDeclares(const std::string& capability) const;

  // --- who makes its requests: whose tasks and sessions they reach (caller.h) ----------------
  void SetCaller(Caller caller);
  Caller caller() const;

  // --- logging/setLevel ----------------------------------------------------------------------
  void SetLogLevel(LogLevel level);
  // True when a notifications/message of `level` goes to the legacy session.
  bool Logs(LogLevel level) const;

  // --- resources/subscribe -------------------------------------------------------------------
  void Subscribe(const std::string& uri);
  void Unsubscribe(const std::string& uri);
  bool IsSubscribed(const std::string& uri) const;

  // --- subscriptions/listen streams (by their request's id) ------------------------------------
  // Adds the stream when `still_open()` (its request is still in flight) says so.
  void AddListen(const Json& id, ListenFilter filter, const std::function<bool()>& still_open);
  // Removes the stream; `end_request()` ends its request in flight. True when either was open.
  bool RemoveListen(const Json& id, const std::function<bool()>& end_request);
  void ClearListens();
  std::vector<Json> ListenIds() const;
  // The streams whose filter `wants` (called under listens_mu_) a notification.
  std::vector<Json> ListensWanting(const std::function<bool(const ListenFilter&)>& wants) const;
  bool ListensForTask(const std::string& task_id) const;

  // --- the 2025-11-25 tasks this legacy session created ----------------------------------------
  // Remembers a task it created and the status its CreateTaskResult showed.
  void TrackLegacyTask(const std::string& task_id, std::string status);
  // True when `status` is news for a task it created and has not seen end: then remembered, and
  // the task forgotten once `ended`.
  bool LegacyTaskChanged(const std::string& task_id, const std::string& status, bool ended);

 private:
  struct Listen {
    Json id;  // the listen request's id: tags every notification of the stream
    ListenFilter filter;
  };

  mutable Mutex lifecycle_mu_;  // guards initialized_, protocol_version_, client_capabilities_
  bool initialized_ GUARDED_BY(lifecycle_mu_) = false;
  std::string protocol_version_ GUARDED_BY(lifecycle_mu_);
  Json client_capabilities_ GUARDED_BY(lifecycle_mu_) = Json::object();

  mutable Mutex caller_mu_;  // guards caller_
  Caller caller_ GUARDED_BY(caller_mu_);

  std::atomic<int> log_level_;  // the LogLevel threshold of notifications/message

  mutable Mutex subscriptions_mu_;  // guards subscriptions_
  std::set<std::string, std::less<>> subscriptions_ GUARDED_BY(subscriptions_mu_);

  mutable Mutex listens_mu_;                                       // guards listens_
  std::map<std::string, Listen> listens_ GUARDED_BY(listens_mu_);  // by IdKey

  mutable Mutex legacy_tasks_mu_;  // guards legacy_tasks_
  // Tasks this legacy session created that have not ended: the last status it was told of.
  std::map<std::string, std::string> legacy_tasks_ GUARDED_BY(legacy_tasks_mu_);
};

}  // namespace imgmcp::mcp
