#include "mcp/session_state.h"

#include <algorithm>
#include <utility>

#include "mcp/json_rpc.h"

namespace imgmcp::mcp {

SessionState::SessionState(LogLevel default_log_level)
    : log_level_(static_cast<int>(default_log_level)) {}

// --- the legacy session's lifecycle -------------------------------------------------------------

bool SessionState::Open(std::string protocol_version, Json client_capabilities) {
  MutexLock lock(lifecycle_mu_);
  if (initialized_) return false;
  initialized_ = true;
  protocol_version_ = std::move(protocol_version);
  client_capabilities_ = std::move(client_capabilities);
  return true;
}

bool SessionState::initialized() const {
  MutexLock lock(lifecycle_mu_);
  return initialized_;
}

std::string SessionState::protocol_version() const {
  MutexLock lock(lifecycle_mu_);
  return protocol_version_;
}

void SessionState::ReadContext(std::string* protocol_version, Json* client_capabilities) const {
  MutexLock lock(lifecycle_mu_);
  *protocol_version = protocol_version_;
  *client_capabilities = client_capabilities_;
}

bool SessionState::ClientDeclares(const std::string& capability) const {
  MutexLock lock(lifecycle_mu_);
  return client_capabilities_.contains(capability);
}

// --- owner and log level ------------------------------------------------------------------------

void SessionState::SetCaller(Caller caller) {
  MutexLock lock(caller_mu_);
  caller_ = std::move(caller);
}

Caller SessionState::caller() const {
  MutexLock lock(caller_mu_);
  return caller_;
}

void SessionState::SetLogLevel(LogLevel level) { log_level_.store(static_cast<int>(level)); }

bool SessionState::Logs(LogLevel level) const {
  return static_cast<int>(level) >= log_level_.load();
}

// --- resources/subscribe ------------------------------------------------------------------------

void SessionState::Subscribe(const std::string& uri) {
  MutexLock lock(subscriptions_mu_);
  subscriptions_.insert(uri);
}

void SessionState::Unsubscribe(const std::string& uri) {
  MutexLock lock(subscriptions_mu_);
  subscriptions_.erase(uri);
}

bool SessionState::IsSubscribed(const std::string& uri) const {
  MutexLock lock(subscriptions_mu_);
  return subscriptions_.count(uri) > 0;
}

// --- subscriptions/listen streams ---------------------------------------------------------------

void SessionState::AddListen(const Json& id, ListenFilter filter,
                             const std::function<bool()>& still_open) {
  MutexLock lock(listens_mu_);
  if (still_open()) listens_.insert_or_assign(IdKey(id), Listen{id, std::move(filter)});
}

bool SessionState::RemoveListen(const Json& id, const std::function<bool()>& end_request) {
  MutexLock lock(listens_mu_);
  const bool listed = listens_.erase(IdKey(id)) > 0;
  // Also one still being opened (acknowledged, not yet listed): AddListen then leaves it out.
  const bool in_flight = end_request();
  return listed || in_flight;
}

void SessionState::ClearListens() {
  MutexLock lock(listens_mu_);
  listens_.clear();
}

std::vector<Json> SessionState::ListenIds() const {
  return ListensWanting([](const ListenFilter&) { return true; });
}

std::vector<Json> SessionState::ListensWanting(
    const std::function<bool(const ListenFilter&)>& wants) const {
  std::vector<Json> ids;
  MutexLock lock(listens_mu_);
  for (const auto& [key, listen] : listens_) {
    if (wants(listen.filter)) ids.push_back(listen.id);
  }
  return ids;
}

bool SessionState::ListensForTask(const std::string& task_id) const {
  MutexLock lock(listens_mu_);
  return std::any_of(listens_.begin(), listens_.end(), [&task_id](const auto& item) {
    const auto& ids = item.second.filter.task_ids;
    return std::find(ids.begin(), ids.end(), task_id) != ids.end();
  });
}

// --- the 2025-11-25 tasks -----------------------------------------------------------------------

void SessionState::TrackLegacyTask(const std::string& task_id, std::string status) {
  MutexLock lock(legacy_tasks_mu_);
  legacy_tasks_.emplace(task_id, std::move(status));
}

bool SessionState::LegacyTaskChanged(const std::string& task_id, const std::string& status,
                                     bool ended) {
  MutexLock lock(legacy_tasks_mu_);
  auto it = legacy_tasks_.find(task_id);
  if (it == legacy_tasks_.end() || it->second == status) return false;
  if (ended) {
    legacy_tasks_.erase(it);
  } else {
    it->second = status;
  }
  return true;
}

}  // namespace imgmcp::mcp
