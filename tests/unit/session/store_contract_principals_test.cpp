// The typed SessionStore suite, sessions per person (principal_scope.h,
// principal_session_store.h): two principals' views of one store keep two chains under one name,
// neither sees, lists, reads or finds the keys of the other's, the local principal (the store
// itself) sees neither, and a view names sessions as their owner does. And the audit trail the
// store keeps beside them (audit_log.h).
#include <gtest/gtest.h>

#include "session/principal_scope.h"
#include "session/principal_session_store.h"
#include "store_backings.h"
#include "test_util.h"

namespace imgmcp::session {
namespace {

using testing::FakeClock;
using testing::MakeVersion;

constexpr char kAlice[] = "a11ce";
constexpr char kBob[] = "b0b";

template <typename Backing>
class StorePrincipalsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Result<std::unique_ptr<SessionStore>> opened = backing_.Open(options_, clock_);
    ASSERT_TRUE(opened.ok()) << opened.error().message;
    store_ = std::move(*opened);
  }

  static VersionInfo Commit(SessionStore& store, const std::string& id, const std::string& bytes,
                            const std::optional<IdempotencyRecord>& key = std::nullopt) {
    auto turn = store.AcquireTurn(id, {});
    EXPECT_TRUE(turn.ok()) << turn.error().message;
    if (!turn.ok()) return {};
    std::optional<int64_t> parent;
    if (auto current = (*turn)->Current()) parent = current->version;
    Result<VersionInfo> v = (*turn)->Commit(MakeVersion(bytes, parent, bytes), key);
    EXPECT_TRUE(v.ok()) << v.error().message;
    return v.ok() ? *v : VersionInfo{};
  }

  static std::vector<std::string> Listed(SessionStore& store) {
    auto page = store.ListSessions(std::nullopt, 100);
    EXPECT_TRUE(page.ok()) << page.error().message;
    std::vector<std::string> ids;
    if (page.ok()) {
      for (const auto& s : page->sessions) ids.push_back(s.session_id);
    }
    return ids;
  }

  Backing backing_;
  StoreOptions options_;
  FakeClock clock_;
  std::unique_ptr<SessionStore> store_;
};

TYPED_TEST_SUITE(StorePrincipalsTest, testing::Backings, testing::BackingNames);

TYPED_TEST(StorePrincipalsTest, TwoPeoplesSessionsOfOneNameAreTwoChains) {
  PrincipalSessionStore alice(*this->store_, kAlice);
  PrincipalSessionStore bob(*this->store_, kBob);
  const VersionInfo a1 = this->Commit(alice, "fox", "alice-1");
  this->Commit(bob, "fox", "bob-1");
  const VersionInfo b2 = this->Commit(bob, "fox", "bob-2");
  EXPECT_EQ(a1.session_id, "fox");  // named as its owner names it
  EXPECT_EQ(a1.version, 1);
  EXPECT_EQ(b2.version, 2);
  EXPECT_EQ(b2.session_id, "fox");

  Result<VersionInfo> hers = alice.GetVersion("fox", std::nullopt);
  ASSERT_TRUE(hers.ok());
  EXPECT_EQ(hers->version, 1);
  EXPECT_EQ(alice.ReadImage(*hers).value(), "alice-1");
  Result<SessionSnapshot> his = bob.ReadSession("fox", std::nullopt, true);
  ASSERT_TRUE(his.ok());
  ASSERT_EQ(his->history.size(), 2u);
  EXPECT_EQ(his->history[1].session_id, "fox");
  EXPECT_EQ(bob.ReadImage(his->history[1]).value(), "bob-2");

  // Nobody else's: the local principal (the store itself) has no "fox"; listings are one's own.
  EXPECT_FALSE(this->store_->SessionExists("fox"));
  EXPECT_EQ(this->store_->GetVersion("fox", std::nullopt).error().code, ErrorCode::kNotFound);
  this->clock_.Advance(std::chrono::seconds(1));  // listed newest first
  this->Commit(bob, "bobs-own", "b");
  EXPECT_FALSE(alice.SessionExists("bobs-own"));
  EXPECT_EQ(this->Listed(alice), std::vector<std::string>{"fox"});
  EXPECT_EQ(this->Listed(bob), (std::vector<std::string>{"bobs-own", "fox"}));
  EXPECT_TRUE(this->Listed(*this->store_).empty());
}

TYPED_TEST(StorePrincipalsTest, IdempotencyKeysAreEachPersonsOwn) {
  PrincipalSessionStore alice(*this->store_, kAlice);
  PrincipalSessionStore bob(*this->store_, kBob);
  this->Commit(alice, "fox", "a", IdempotencyRecord{"key-1", "digest-a"});
  EXPECT_FALSE(bob.FindAppliedKey("fox", "key-1").value().has_value());
  this->Commit(bob, "fox", "b", IdempotencyRecord{"key-1", "digest-b"});  // no conflict
  auto applied = alice.FindAppliedKey("fox", "key-1").value();
  ASSERT_TRUE(applied.has_value());
  EXPECT_EQ(applied->digest, "digest-a");
  ASSERT_TRUE(applied->version.has_value());
  EXPECT_EQ(applied->version->session_id, "fox");
}

TYPED_TEST(StorePrincipalsTest, AReservedTurnKeepsItsOwnersNameAndSession) {
  PrincipalSessionStore alice(*this->store_, kAlice);
  auto reserved = alice.ReserveTurn("fox");
  ASSERT_TRUE(reserved.ok()) << reserved.error().message;
  EXPECT_EQ((*reserved)->session_id(), "fox");
  auto turn = alice.AcquireReservedTurn(std::move(*reserved), {});
  ASSERT_TRUE(turn.ok()) << turn.error().message;
  ASSERT_TRUE((*turn)->Commit(MakeVersion("a")).ok());
  turn->reset();
  EXPECT_TRUE(alice.SessionExists("fox"));
  EXPECT_FALSE(this->store_->SessionExists("fox"));
  EXPECT_TRUE(this->store_->SessionExists(ScopedSessionId(kAlice, "fox")));
  // A view refuses what its owner could not name, as the store does.
  EXPECT_EQ(alice.GetVersion("../x", std::nullopt).error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(alice.GetVersion(ScopedSessionId(kBob, "fox"), std::nullopt).error().code,
            ErrorCode::kInvalidArgument);
}

// A gallery link's view (only_session): its one session reads as through the owner's view;
// every other session of the owner is an unknown session, listed nowhere, its bytes unreadable.
TYPED_TEST(StorePrincipalsTest, AViewOfOneSessionReachesThatSessionAlone) {
  PrincipalSessionStore alice(*this->store_, kAlice);
  const VersionInfo fox = this->Commit(alice, "fox", "fox-1");
  this->clock_.Advance(std::chrono::seconds(1));
  const VersionInfo cat = this->Commit(alice, "cat", "cat-1");
  PrincipalSessionStore link(*this->store_, kAlice, "fox");

  EXPECT_EQ(link.ReadImage(link.GetVersion("fox", std::nullopt).value()).value(), "fox-1");
  EXPECT_TRUE(link.SessionExists("fox"));
  EXPECT_EQ(this->Listed(link), std::vector<std::string>{"fox"});
  EXPECT_EQ(this->Listed(alice), (std::vector<std::string>{"cat", "fox"}));

  // The owner's other session: the answers of a session nobody made.
  const Error unknown = link.GetVersion("nobody", std::nullopt).error();
  const Error other = link.GetVersion("cat", std::nullopt).error();
  EXPECT_EQ(other.code, ErrorCode::kNotFound);
  EXPECT_EQ(other.message.find("cat"), unknown.message.find("nobody"));
  EXPECT_FALSE(link.SessionExists("cat"));
  EXPECT_EQ(link.ReadSession("cat", std::nullopt, true).error().code, ErrorCode::kNotFound);
  EXPECT_EQ(link.ReadImage(cat).error().code, ErrorCode::kNotFound);
  EXPECT_EQ(link.FindAppliedKey("cat", "k").error().code, ErrorCode::kNotFound);
  EXPECT_EQ(link.AcquireTurn("cat", {}).error().code, ErrorCode::kNotFound);
  EXPECT_EQ(link.ReserveTurn("cat").error().code, ErrorCode::kNotFound);
  EXPECT_EQ(link.GetVersion("../x", std::nullopt).error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(fox.session_id, "fox");
}

// Keys every process on the store shares: the first one kept is everyone's.
TYPED_TEST(StorePrincipalsTest, ASharedKeyIsTheFirstOneKept) {
  const Result<std::string> first = this->store_->SharedKey("gallery", "k1");
  ASSERT_TRUE(first.ok()) << first.error().message;
  EXPECT_EQ(*first, "k1");
  EXPECT_EQ(this->store_->SharedKey("gallery", "k2").value(), "k1");
  EXPECT_EQ(this->store_->SharedKey("other", "k3").value(), "k3");
  EXPECT_EQ(this->store_->SharedKey("gallery", "k4").value(), "k1");
}

TYPED_TEST(StorePrincipalsTest, ASpendHoldThroughAViewIsItsOwners) {
  PrincipalSessionStore alice(*this->store_, kAlice);
  SpendHold hold;
  hold.session_id = "fox";
  hold.model = "m";
  hold.estimate_usd = 0.07;
  hold.now_ms = 1'800'000'000'000;
  hold.expires_ms = hold.now_ms + 600'000;
  ASSERT_TRUE(alice.ReserveSpend(hold, {}).ok());
  const SpendTotals mine = alice.SpendTotalsFor(hold).value();
  EXPECT_DOUBLE_EQ(mine.principal_day_usd, 0.07);
  EXPECT_DOUBLE_EQ(mine.session_usd, 0.07);
  const SpendTotals local = this->store_->SpendTotalsFor(hold).value();  // the local "fox"
  EXPECT_DOUBLE_EQ(local.session_usd, 0);
  EXPECT_DOUBLE_EQ(local.principal_day_usd, 0);
  EXPECT_DOUBLE_EQ(local.day_usd, 0.07);  // the store's day is everyone's
}

TYPED_TEST(StorePrincipalsTest, TheAuditTrailKeepsEventsInOrderPicksOnesAndForgetsOldOnes) {
  SessionStore& store = *this->store_;
  AuditEvent generate;
  generate.time_ms = 1'000;
  generate.principal = kAlice;
  generate.issuer = "https://issuer";
  generate.subject = "alice";
  generate.client_id = "app";
  generate.action = "generate_image";
  generate.session_id = "fox";
  generate.version = 1;
  generate.idempotency_key = "k-1";
  generate.cost_usd = 0.0336;
  generate.trace_id = "4bf92f3577b34da6a3ce929d0e0e4736";
  generate.outcome = "ok";
  AuditEvent refused;
  refused.time_ms = 2'000;
  refused.action = "token";
  refused.outcome = "refused: expired";
  AuditEvent cancel = generate;
  cancel.time_ms = 3'000;
  cancel.principal = kBob;
  cancel.subject = "bob";
  cancel.action = "tasks/cancel";
  cancel.version.reset();
  cancel.task_id = "t1";
  for (const AuditEvent* e : {&cancel, &generate, &refused}) {
    ASSERT_TRUE(store.RecordAudit(*e).ok());
  }
  auto all = store.ReadAudit({});
  ASSERT_TRUE(all.ok()) << all.error().message;
  ASSERT_EQ(all->size(), 3u);
  EXPECT_EQ((*all)[0].action, "generate_image");  // by time, whatever the order recorded
  EXPECT_EQ((*all)[0].version, 1);
  EXPECT_DOUBLE_EQ((*all)[0].cost_usd, 0.0336);
  EXPECT_EQ((*all)[0].trace_id, generate.trace_id);
  EXPECT_EQ((*all)[0].issuer, "https://issuer");
  EXPECT_EQ((*all)[0].idempotency_key, "k-1");
  EXPECT_EQ((*all)[1].outcome, "refused: expired");
  EXPECT_FALSE((*all)[2].version.has_value());
  EXPECT_EQ((*all)[2].task_id, "t1");
  // One person's, by key or by subject; later ones.
  EXPECT_EQ(store.ReadAudit({.principal = std::string(kBob)})->size(), 1u);
  EXPECT_EQ(store.ReadAudit({.principal = std::string("alice")})->size(), 1u);
  EXPECT_EQ(store.ReadAudit({.since_ms = 1'500})->size(), 2u);
  EXPECT_EQ(store.ReadAudit({.limit = 1})->size(), 1u);
  EXPECT_EQ(store.ForgetAudit(2'500).value(), 2);
  ASSERT_EQ(store.ReadAudit({})->size(), 1u);
  EXPECT_EQ(store.ReadAudit({})->front().action, "tasks/cancel");
}

}  // namespace
}  // namespace imgmcp::session
