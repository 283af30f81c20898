// task_records.h and task_rules.h: status names, ids, the task key, what CreateTask and UpdateTask
// accept, expiry and the ListTasks cursor.
#include "session/task_records.h"

#include <gtest/gtest.h>

#include "common/base64.h"
#include "session/idempotency.h"
#include "session/task_rules.h"

namespace imgmcp::session {
namespace {

TEST(TaskRecordsTest, StatusNamesRoundTripAndOnlyThreeAreTerminal) {
  const std::pair<TaskStatus, const char*> all[] = {
      {TaskStatus::kWorking, "working"},     {TaskStatus::kInputRequired, "input_required"},
      {TaskStatus::kCompleted, "completed"}, {TaskStatus::kFailed, "failed"},
      {TaskStatus::kCancelled, "cancelled"},
  };
  for (const auto& [status, name] : all) {
    EXPECT_EQ(TaskStatusName(status), name);
    EXPECT_EQ(ParseTaskStatus(name), status);
  }
  EXPECT_FALSE(ParseTaskStatus("Working").has_value());
  EXPECT_FALSE(ParseTaskStatus("").has_value());
  EXPECT_FALSE(IsTerminal(TaskStatus::kWorking));
  EXPECT_FALSE(IsTerminal(TaskStatus::kInputRequired));
  EXPECT_TRUE(IsTerminal(TaskStatus::kCompleted));
  EXPECT_TRUE(IsTerminal(TaskStatus::kFailed));
  EXPECT_TRUE(IsTerminal(TaskStatus::kCancelled));
}

TEST(TaskRecordsTest, TaskIdsAre32LowercaseHexCharacters) {
  EXPECT_TRUE(IsValidTaskId("0123456789abcdef0123456789abcdef"));
  EXPECT_FALSE(IsValidTaskId("0123456789ABCDEF0123456789abcdef"));
  EXPECT_FALSE(IsValidTaskId("0123456789abcdef0123456789abcde"));
  EXPECT_FALSE(IsValidTaskId("0123456789abcdef0123456789abcdef0"));
  EXPECT_FALSE(IsValidTaskId("0123456789abcdef0123456789abcdeg"));
  EXPECT_FALSE(IsValidTaskId(""));
}

TEST(TaskRecordsTest, TheTaskKeyIsAValidIdempotencyKey) {
  const std::string key = TaskIdempotencyKey("0123456789abcdef0123456789abcdef");
  EXPECT_EQ(key, "task:0123456789abcdef0123456789abcdef");
  EXPECT_TRUE(IsValidIdempotencyKey(key));
}

TEST(TaskRulesTest, NewTasksNeedAToolAndSaneNumbers) {
  NewTask ok;
  ok.tool = "generate_image";
  EXPECT_TRUE(ValidateNewTask(ok).ok());  // "" session: a call that names none
  ok.session_id = "s-1";
  EXPECT_TRUE(ValidateNewTask(ok).ok());
  NewTask bad = ok;
  bad.session_id = "../x";
  EXPECT_NE(ValidateNewTask(bad).error().message.find("session_id"), std::string::npos);
  bad = ok;
  bad.tool = "";
  EXPECT_NE(ValidateNewTask(bad).error().message.find("tool"), std::string::npos);
  bad = ok;
  bad.ttl_ms = -1;
  EXPECT_NE(ValidateNewTask(bad).error().message.find("ttl_ms"), std::string::npos);
  bad = ok;
  bad.poll_interval_ms = -5;
  EXPECT_NE(ValidateNewTask(bad).error().message.find("poll_interval_ms"), std::string::npos);
}

TEST(TaskRulesTest, EachStatusTakesOnlyWhatItNeeds) {
  TaskUpdate u;
  u.status = TaskStatus::kCompleted;
  EXPECT_FALSE(ValidateTaskUpdate(u).ok());
  u.version = 3;
  EXPECT_TRUE(ValidateTaskUpdate(u).ok());
  u.version.reset();
  u.result_json = "{}";
  EXPECT_TRUE(ValidateTaskUpdate(u).ok());
  u.error_json = "{}";
  EXPECT_FALSE(ValidateTaskUpdate(u).ok());
  u = TaskUpdate{};
  u.status = TaskStatus::kFailed;
  EXPECT_FALSE(ValidateTaskUpdate(u).ok());
  u.error_json = "{}";
  EXPECT_TRUE(ValidateTaskUpdate(u).ok());
  u.version = 1;
  EXPECT_FALSE(ValidateTaskUpdate(u).ok());
  for (TaskStatus s : {TaskStatus::kCancelled, TaskStatus::kWorking, TaskStatus::kInputRequired}) {
    u = TaskUpdate{};
    u.status = s;
    u.status_message = "m";
    EXPECT_TRUE(ValidateTaskUpdate(u).ok());
    u.result_json = "{}";
    EXPECT_EQ(ValidateTaskUpdate(u).error().code, ErrorCode::kInvalidArgument);
  }
}

TEST(TaskRulesTest, OnlyATerminalRowWithATtlExpires) {
  TaskRow row;
  row.updated_ms = 1000;
  row.record.ttl_ms = 500;
  row.record.status = TaskStatus::kWorking;
  EXPECT_FALSE(TaskExpired(row, 10'000));
  row.record.status = TaskStatus::kCompleted;
  EXPECT_FALSE(TaskExpired(row, 1499));
  EXPECT_TRUE(TaskExpired(row, 1500));
  row.record.ttl_ms = 0;
  EXPECT_FALSE(TaskExpired(row, 1'000'000'000));
}

TEST(TaskRulesTest, CursorsRoundTripAndAnythingElseIsRefused) {
  const std::string id = "0123456789abcdef0123456789abcdef";
  int64_t ms = 0;
  std::string got;
  ASSERT_TRUE(DecodeTaskCursor(EncodeTaskCursor(1'800'000'000'123, id), &ms, &got));
  EXPECT_EQ(ms, 1'800'000'000'123);
  EXPECT_EQ(got, id);
  for (const std::string& bad :
       {std::string(""), std::string("nope"), Base64Encode("t1:12:xyz"),
        Base64Encode("c1:12:" + id), Base64Encode("t1::" + id), Base64Encode("t1:1x:" + id)}) {
    EXPECT_FALSE(DecodeTaskCursor(bad, &ms, &got)) << bad;
  }
}

TEST(TaskRulesTest, ARunnerThatStoppedIsAJsonRpcErrorSayingNothingWasCommitted) {
  EXPECT_EQ(RunnerStoppedErrorJson("replica"),
            R"({"code":-32603,"message":"the replica running this task stopped before it )"
            R"(finished; nothing was committed"})");
  const Error e = TaskAlreadyTerminalError("abc", TaskStatus::kCancelled);
  EXPECT_EQ(e.code, ErrorCode::kFailedPrecondition);
  EXPECT_NE(e.message.find("cancelled"), std::string::npos);
}

}  // namespace
}  // namespace imgmcp::session
