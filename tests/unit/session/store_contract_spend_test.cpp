// The typed SessionStore suite, the spend ledger (session_store.h "The spend ledger",
// spend_ledger.h): holds and charges summed by UTC day and by session, kept across a restart;
// budgets that refuse a hold (naming the budget) and keep nothing; released and expired holds
// that stop counting, renewed ones that count until their new expiry; a day that resets the
// daily sum. Concurrent holds against one budget are in store_contract_concurrency_test.cpp.
#include <gtest/gtest.h>

#include <chrono>

#include "session/spend_rules.h"
#include "store_backings.h"
#include "test_util.h"

namespace imgmcp::session {
namespace {

using testing::FakeClock;

constexpr int64_t kDayMs = 24 * 3600 * 1000;

template <typename Backing>
class StoreSpendTest : public ::testing::Test {
 protected:
  void SetUp() override { Reopen(); }

  void Reopen() {
    store_.reset();
    Result<std::unique_ptr<SessionStore>> opened = backing_.Open(options_, clock_);
    ASSERT_TRUE(opened.ok()) << opened.error().message;
    store_ = std::move(*opened);
  }

  int64_t Now() const {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               clock_.WallNow().time_since_epoch())
        .count();
  }

  SpendHold Hold(const std::string& session, double usd) const {
    SpendHold hold;
    hold.session_id = session;
    hold.model = "gemini-3.1-flash-lite-image";
    hold.estimate_usd = usd;
    hold.now_ms = Now();
    hold.expires_ms = Now() + 600'000;
    return hold;
  }

  SpendTotals Totals(const std::string& session) {
    Result<SpendTotals> totals = store_->SpendTotalsFor(Hold(session, 0));
    EXPECT_TRUE(totals.ok()) << totals.error().message;
    return totals.ok() ? *totals : SpendTotals{};
  }

  int64_t Reserve(const std::string& session, double usd, const SpendBudgets& budgets = {}) {
    Result<int64_t> id = store_->ReserveSpend(Hold(session, usd), budgets);
    EXPECT_TRUE(id.ok()) << id.error().message;
    return id.ok() ? *id : -1;
  }

  static SpendCharge Charge(double usd) {
    SpendCharge charge;
    charge.usd = usd;
    charge.tokens = {.input = 18, .output_image = 1120, .output_text = 12, .thoughts = 40};
    charge.priced_model = "gemini-3.1-flash-lite-image";
    return charge;
  }

  Backing backing_;  // destroyed after the store below
  FakeClock clock_;
  StoreOptions options_;
  std::unique_ptr<SessionStore> store_;
};

TYPED_TEST_SUITE(StoreSpendTest, testing::Backings, testing::BackingNames);

TYPED_TEST(StoreSpendTest, HoldsAndChargesAreSummedByDayAndSessionAndOutliveARestart) {
  const int64_t a = this->Reserve("s1", 0.10);
  this->Reserve("s2", 0.05);
  SpendTotals t = this->Totals("s1");
  EXPECT_DOUBLE_EQ(t.day_usd, 0.15);
  EXPECT_DOUBLE_EQ(t.session_usd, 0.10);
  EXPECT_DOUBLE_EQ(t.session_charged_usd, 0);
  ASSERT_TRUE(this->store_->SettleSpend(a, this->Charge(0.0336)).ok());
  t = this->Totals("s1");
  EXPECT_DOUBLE_EQ(t.day_usd, 0.0836);
  EXPECT_DOUBLE_EQ(t.session_usd, 0.0336);
  EXPECT_DOUBLE_EQ(t.session_charged_usd, 0.0336);
  this->Reopen();
  t = this->Totals("s1");
  EXPECT_DOUBLE_EQ(t.session_charged_usd, 0.0336);
  EXPECT_DOUBLE_EQ(t.day_usd, 0.0836);  // the other hold is live until it expires
  // A settled hold is a charge: it cannot be settled or charged twice.
  Status again = this->store_->SettleSpend(a, this->Charge(1));
  EXPECT_EQ(again.error().code, ErrorCode::kNotFound);
  EXPECT_DOUBLE_EQ(this->Totals("s1").session_charged_usd, 0.0336);
}

TYPED_TEST(StoreSpendTest, ASessionsSnapshotCarriesWhatItWasChargedAndNoHolds) {
  {
    auto turn = this->store_->AcquireTurn("s1", {});
    ASSERT_TRUE(turn.ok()) << turn.error().message;
    ASSERT_TRUE((*turn)->Commit(MakeVersion("bytes")).ok());
  }
  auto cost = [&](bool history) {
    Result<SessionSnapshot> snapshot = this->store_->ReadSession("s1", std::nullopt, history);
    EXPECT_TRUE(snapshot.ok()) << snapshot.error().message;
    return snapshot.ok() ? snapshot->cost_usd : -1.0;
  };
  EXPECT_DOUBLE_EQ(cost(false), 0);
  const int64_t a = this->Reserve("s1", 0.10);
  this->Reserve("s1", 0.20);  // a hold is not a charge
  ASSERT_TRUE(this->store_->SettleSpend(a, this->Charge(0.0336)).ok());
  const int64_t other = this->Reserve("s2", 0.05);
  ASSERT_TRUE(this->store_->SettleSpend(other, this->Charge(0.05)).ok());
  EXPECT_DOUBLE_EQ(cost(false), 0.0336);
  EXPECT_DOUBLE_EQ(cost(true), 0.0336);
}

TYPED_TEST(StoreSpendTest, ASessionBudgetRefusesTheHoldThatWouldCrossItAndKeepsNothing) {
  const SpendBudgets budgets{.per_session_usd = 0.10};
  this->Reserve("s1", 0.06, budgets);
  Result<int64_t> refused = this->store_->ReserveSpend(this->Hold("s1", 0.06), budgets);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code, ErrorCode::kResourceExhausted);
  EXPECT_NE(refused.error().message.find("--budget-usd-per-session is $0.1000"), std::string::npos)
      << refused.error().message;
  EXPECT_NE(refused.error().message.find("$0.0600"), std::string::npos) << refused.error().message;
  EXPECT_NE(refused.error().message.find("Nothing was sent"), std::string::npos);
  EXPECT_DOUBLE_EQ(this->Totals("s1").session_usd, 0.06);  // the refused hold was not kept
  this->Reserve("s2", 0.06, budgets);                      // another session has its own budget
  this->Reserve("s1", 0.04, budgets);                      // exactly reaching it is allowed
}

TYPED_TEST(StoreSpendTest, ADailyBudgetCountsEverySessionAndResetsAtUtcMidnight) {
  const SpendBudgets budgets{.per_day_usd = 0.10};
  const int64_t a = this->Reserve("s1", 0.07, budgets);
  ASSERT_TRUE(this->store_->SettleSpend(a, this->Charge(0.07)).ok());
  Result<int64_t> refused = this->store_->ReserveSpend(this->Hold("s2", 0.05), budgets);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code, ErrorCode::kResourceExhausted);
  const std::string& message = refused.error().message;
  EXPECT_NE(message.find("--budget-usd-per-day"), std::string::npos) << message;
  EXPECT_NE(message.find("resets at " + NextUtcMidnight(this->Now())), std::string::npos)
      << message;
  this->clock_.Advance(std::chrono::milliseconds(kDayMs));
  this->Reserve("s2", 0.05, budgets);                              // a new UTC day
  EXPECT_DOUBLE_EQ(this->Totals("s1").session_charged_usd, 0.07);  // the session keeps its total
}

TYPED_TEST(StoreSpendTest, APersonsDailyBudgetCountsOnlyTheirCallsAndResetsAtUtcMidnight) {
  const SpendBudgets budgets{.per_principal_day_usd = 0.10};
  SpendHold alice = this->Hold("s1", 0.07);
  alice.principal = "a11ce";
  ASSERT_TRUE(this->store_->ReserveSpend(alice, budgets).ok());
  alice.session_id = "s2";  // another session of hers counts too
  Result<int64_t> refused = this->store_->ReserveSpend(alice, budgets);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code, ErrorCode::kResourceExhausted);
  EXPECT_NE(refused.error().message.find("--budget-usd-per-user-day is $0.1000"), std::string::npos)
      << refused.error().message;
  EXPECT_EQ(RefusedBudget(refused.error()), "per_user_day");
  SpendHold bob = this->Hold("s1", 0.07);
  bob.principal = "b0b";
  EXPECT_TRUE(this->store_->ReserveSpend(bob, budgets).ok());  // his own budget
  Result<SpendTotals> totals = this->store_->SpendTotalsFor(alice);
  ASSERT_TRUE(totals.ok());
  EXPECT_DOUBLE_EQ(totals->principal_day_usd, 0.07);
  EXPECT_DOUBLE_EQ(totals->day_usd, 0.14);
  this->clock_.Advance(std::chrono::milliseconds(kDayMs));
  alice.now_ms = this->Now();
  alice.expires_ms = this->Now() + 600'000;
  EXPECT_TRUE(this->store_->ReserveSpend(alice, budgets).ok());  // a new UTC day
}

TYPED_TEST(StoreSpendTest, CallsAreCountedPerPersonPerWindowAndOldWindowsForgotten) {
  SessionStore& store = *this->store_;
  for (int i = 1; i <= 3; ++i) {
    Result<int64_t> calls = store.CountCall("a11ce", 60'000, 0);
    ASSERT_TRUE(calls.ok()) << calls.error().message;
    EXPECT_EQ(*calls, i);
  }
  EXPECT_EQ(store.CountCall("b0b", 60'000, 0).value(), 1);          // another person
  EXPECT_EQ(store.CountCall("", 60'000, 0).value(), 1);             // the local principal
  EXPECT_EQ(store.CountCall("a11ce", 120'000, 60'000).value(), 1);  // the next window
  this->Reopen();  // counted in the store: another process (or replica) sees the same counts
  EXPECT_EQ(this->store_->CountCall("a11ce", 120'000, 120'000).value(), 2);
  // Windows before 120'000 were forgotten: counting in one again starts afresh.
  EXPECT_EQ(this->store_->CountCall("a11ce", 60'000, 0).value(), 1);
  EXPECT_EQ(this->store_->CountCall("NOT-HEX", 60'000, 0).error().code,
            ErrorCode::kInvalidArgument);
}

TYPED_TEST(StoreSpendTest, ReleasedAndExpiredHoldsStopCounting) {
  const SpendBudgets budgets{.per_session_usd = 0.10};
  const int64_t a = this->Reserve("s1", 0.08, budgets);
  ASSERT_TRUE(this->store_->ReleaseSpend(a).ok());
  ASSERT_TRUE(this->store_->ReleaseSpend(a).ok());  // gone already: not an error
  EXPECT_EQ(this->store_->SettleSpend(a, this->Charge(0.01)).error().code, ErrorCode::kNotFound);
  this->Reserve("s1", 0.08, budgets);
  EXPECT_FALSE(this->store_->ReserveSpend(this->Hold("s1", 0.08), budgets).ok());
  // The first hold's call cannot still be running after its expiry (its process died).
  this->clock_.Advance(std::chrono::milliseconds(600'001));
  this->Reserve("s1", 0.08, budgets);
}

// A call that waited long for its session's turn renews its hold when its backend call starts.
TYPED_TEST(StoreSpendTest, ARenewedHoldCountsUntilItsNewExpiry) {
  const int64_t a = this->Reserve("s1", 0.05);  // expires 600 s from now
  this->clock_.Advance(std::chrono::milliseconds(500'000));
  ASSERT_TRUE(this->store_->RenewSpendHold(a, this->Now() + 600'000).ok());
  this->clock_.Advance(std::chrono::milliseconds(200'000));  // past the first expiry
  EXPECT_DOUBLE_EQ(this->Totals("s1").session_usd, 0.05);
  this->clock_.Advance(std::chrono::milliseconds(400'001));  // past the new one
  EXPECT_DOUBLE_EQ(this->Totals("s1").session_usd, 0);
  ASSERT_TRUE(this->store_->ReleaseSpend(a).ok());
  EXPECT_TRUE(this->store_->RenewSpendHold(a, this->Now() + 1).ok());  // gone: not an error
  EXPECT_DOUBLE_EQ(this->Totals("s1").session_usd, 0);
}

TYPED_TEST(StoreSpendTest, ASettledChargeCountsEvenWhenItsHoldHadExpired) {
  const int64_t a = this->Reserve("s1", 0.01);
  this->clock_.Advance(std::chrono::milliseconds(600'001));
  EXPECT_DOUBLE_EQ(this->Totals("s1").session_usd, 0);
  ASSERT_TRUE(this->store_->SettleSpend(a, this->Charge(0.02)).ok());
  EXPECT_DOUBLE_EQ(this->Totals("s1").session_charged_usd, 0.02);
}

TYPED_TEST(StoreSpendTest, MalformedHoldsAndChargesAreRefused) {
  SpendHold bad = this->Hold("../escape", 0.01);
  EXPECT_EQ(this->store_->ReserveSpend(bad, {}).error().code, ErrorCode::kInvalidArgument);
  bad = this->Hold("s1", -1);
  EXPECT_EQ(this->store_->ReserveSpend(bad, {}).error().code, ErrorCode::kInvalidArgument);
  const int64_t a = this->Reserve("s1", 0.01);
  SpendCharge charge = this->Charge(0.01);
  charge.tokens.input = -5;
  EXPECT_EQ(this->store_->SettleSpend(a, charge).error().code, ErrorCode::kInvalidArgument);
  EXPECT_DOUBLE_EQ(this->Totals("s1").session_charged_usd, 0);
}

}  // namespace
}  // namespace imgmcp::session
