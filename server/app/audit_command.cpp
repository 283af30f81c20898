#include "server/app/audit_command.h"

#include <chrono>
#include <cstdio>
#include <sstream>

#include "common/clock.h"
#include "common/log.h"
#include "common/usd.h"
#include "server/app/config.h"
#include "server/app/wiring.h"

namespace imgmcp::app {
namespace {

// "YYYY-MM-DD" or "YYYY-MM-DDTHH:MM:SS[.fff]Z", as milliseconds since the epoch.
std::optional<int64_t> ParseUtc(const std::string& text) {
  int y = 0, mo = 0, d = 0, h = 0, mi = 0, s = 0;
  char tail[16] = {0};
  const int fields =
      std::sscanf(text.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d%15s", &y, &mo, &d, &h, &mi, &s, tail);
  const bool date_only = fields == 3 && text.size() == 10;
  const bool time =
      fields == 7 && (std::string(tail) == "Z" || (tail[0] == '.' && text.back() == 'Z'));
  if (!date_only && !time) return std::nullopt;
  const std::chrono::year_month_day ymd{std::chrono::year(y), std::chrono::month(mo),
                                        std::chrono::day(d)};
  if (!ymd.ok() || h > 23 || mi > 59 || s > 60) return std::nullopt;
  const auto at = std::chrono::sys_days(ymd) + std::chrono::hours(h) + std::chrono::minutes(mi) +
                  std::chrono::seconds(s);
  return std::chrono::duration_cast<std::chrono::milliseconds>(at.time_since_epoch()).count();
}

std::string TimeOf(int64_t ms) {
  return FormatRfc3339(std::chrono::system_clock::time_point(std::chrono::milliseconds(ms)));
}

}  // namespace

bool IsAuditCommand(const std::vector<std::string>& args) {
  return !args.empty() && args.front() == "audit";
}

Result<AuditRequest> ParseAuditArgs(const std::vector<std::string>& args) {
  AuditRequest request;
  for (size_t i = IsAuditCommand(args) ? 1 : 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    const bool ours = arg == "--since" || arg == "--principal" || arg == "--format";
    if (!ours) {
      request.store_args.push_back(arg);
      continue;
    }
    if (i + 1 >= args.size()) return InvalidArgument(arg + " needs a value");
    const std::string& value = args[++i];
    if (arg == "--since") {
      std::optional<int64_t> since = ParseUtc(value);
      if (!since) {
        return InvalidArgument(
            "--since: expected a UTC date (2026-12-06) or time "
            "(2026-12-06T17:00:00Z), got \"" +
            log::Clip(value) + "\"");
      }
      request.query.since_ms = *since;
    } else if (arg == "--principal") {
      request.query.principal = value;
    } else if (value == "json" || value == "text") {
      request.json = value == "json";
    } else {
      return InvalidArgument("--format: expected json or text, got \"" + log::Clip(value) + "\"");
    }
  }
  return request;
}

Json AuditEventJson(const session::AuditEvent& e) {
  Json json = {{"time", TimeOf(e.time_ms)},  {"principal", e.principal},
               {"issuer", e.issuer},         {"subject", e.subject},
               {"client_id", e.client_id},   {"action", e.action},
               {"session_id", e.session_id}, {"idempotency_key", e.idempotency_key},
               {"task_id", e.task_id},       {"cost_usd", e.cost_usd},
               {"trace_id", e.trace_id},     {"outcome", e.outcome}};
  json["version"] = e.version ? Json(*e.version) : Json(nullptr);
  return json;
}

std::string AuditEventLine(const session::AuditEvent& e) {
  std::ostringstream line;
  line << TimeOf(e.time_ms) << "  "
       << (!e.subject.empty()    ? e.subject
           : e.principal.empty() ? "(local)"
                                 : e.principal);
  if (!e.client_id.empty()) line << " via " << e.client_id;
  line << "  " << e.action;
  if (!e.session_id.empty()) line << " " << e.session_id;
  if (e.version) line << " v" << *e.version;
  if (!e.task_id.empty()) line << " task " << e.task_id;
  if (!e.idempotency_key.empty()) line << " key " << e.idempotency_key;
  if (e.cost_usd > 0) line << " " << FormatUsd(e.cost_usd);
  if (!e.trace_id.empty()) line << " trace " << e.trace_id;
  line << "  " << e.outcome;
  return line.str();
}

int RunAuditCommand(const std::vector<std::string>& args,
                    const std::function<std::optional<std::string>(const std::string&)>& env) {
  Result<AuditRequest> request = ParseAuditArgs(args);
  if (!request.ok()) {
    log::Error("audit", request.error().message);
    return 2;
  }
  Result<Config> config = ParseConfig(request->store_args, env);
  if (!config.ok()) {
    log::Error("audit", config.error().message);
    return 2;
  }
  SystemClock clock;
  auto store = OpenStore(*config, clock, nullptr);
  if (!store.ok()) {
    log::Error("audit", store.error().message);
    return 1;
  }
  Result<std::vector<session::AuditEvent>> events = (*store)->ReadAudit(request->query);
  if (!events.ok()) {
    log::Error("audit", "reading the audit trail: " + events.error().message);
    return 1;
  }
  std::string out;
  if (request->json) {
    Json all = Json::array();
    for (const auto& e : *events) all.push_back(AuditEventJson(e));
    out = all.dump(2) + "\n";
  } else {
    for (const auto& e : *events) out += AuditEventLine(e) + "\n";
  }
  std::fputs(out.c_str(), stdout);  // stdout-ok: CLI mode, not serving MCP
  return 0;
}

}  // namespace imgmcp::app
