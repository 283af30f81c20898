// The `imgmcp audit` command's arguments and output (audit_command.h); the command against a real
// store and server is tests/integration/test_audit.py.
#include "server/app/audit_command.h"

#include <gtest/gtest.h>

namespace imgmcp::app {
namespace {

TEST(AuditCommandTest, ItsOwnFlagsAreReadAndTheRestLeftForTheStore) {
  auto request = ParseAuditArgs({"audit", "--data-dir", "/d", "--since", "2026-12-06",
                                 "--principal", "alice", "--format", "json"});
  ASSERT_TRUE(request.ok()) << request.error().message;
  EXPECT_EQ(request->store_args, (std::vector<std::string>{"--data-dir", "/d"}));
  EXPECT_EQ(request->query.since_ms, 1'796'515'200'000);  // 2026-12-06T00:00:00Z
  EXPECT_EQ(request->query.principal, "alice");
  EXPECT_TRUE(request->json);
  auto timed = ParseAuditArgs({"audit", "--since", "2026-12-06T17:00:01.5Z"});
  ASSERT_TRUE(timed.ok()) << timed.error().message;
  EXPECT_EQ(timed->query.since_ms, 1'796'515'200'000 + 17 * 3'600'000 + 1'000);
  EXPECT_FALSE(timed->json);
}

TEST(AuditCommandTest, MalformedFlagsAreRefusedNamingThem) {
  for (const std::vector<std::string>& bad :
       {std::vector<std::string>{"audit", "--since", "yesterday"},
        std::vector<std::string>{"audit", "--since", "2026-13-01"},
        std::vector<std::string>{"audit", "--format", "xml"},
        std::vector<std::string>{"audit", "--principal"}}) {
    auto request = ParseAuditArgs(bad);
    ASSERT_FALSE(request.ok()) << bad[1];
    EXPECT_NE(request.error().message.find(bad[1]), std::string::npos) << request.error().message;
  }
}

TEST(AuditCommandTest, AnEventIsALineAndAnObject) {
  session::AuditEvent e;
  e.time_ms = 1'796'515'200'000;
  e.subject = "alice";
  e.client_id = "app";
  e.action = "edit_image";
  e.session_id = "fox";
  e.version = 3;
  e.idempotency_key = "k-1";
  e.cost_usd = 0.0336;
  e.outcome = "ok";
  EXPECT_EQ(AuditEventLine(e),
            "2026-12-06T00:00:00.000Z  alice via app  edit_image fox v3 key k-1 $0.0336  ok");
  Json json = AuditEventJson(e);
  EXPECT_EQ(json["version"], 3);
  EXPECT_EQ(json["time"], "2026-12-06T00:00:00.000Z");
  e.version.reset();
  e.subject.clear();
  EXPECT_TRUE(AuditEventJson(e)["version"].is_null());
  EXPECT_NE(AuditEventLine(e).find("(local)"), std::string::npos);
}

}  // namespace
}  // namespace imgmcp::app
