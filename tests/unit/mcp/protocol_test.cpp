// The core's typed protocol edges: the method table, typed params (errors name the field), the
// modern _meta envelope, era decorations of results, routing facts and the error mapping.
#include "mcp/protocol.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "mcp/method_table.h"

namespace imgmcp::mcp {
namespace {

Json Envelope(Json extra = Json::object()) {
  Json meta = {{"io.modelcontextprotocol/protocolVersion", "2026-07-28"},
               {"io.modelcontextprotocol/clientCapabilities", Json::object()}};
  meta.update(extra);
  return meta;
}

template <typename P>
std::string ErrorOf(const Json& params, std::string_view method) {
  auto parsed = P::FromJson(params, method);
  EXPECT_FALSE(parsed.ok()) << params.dump();
  return parsed.ok() ? "" : parsed.error().message;
}

TEST(MethodTableTest, EachMethodSaysWhichErasItExistsIn) {
  auto era = [](const char* name) {
    const MethodInfo* info = FindMethod(name);
    EXPECT_NE(info, nullptr) << name;
    if (info == nullptr) return std::string("?");
    return std::string(info->legacy ? "L" : "") + (info->modern ? "M" : "");
  };
  for (const char* legacy_only : {"initialize", "ping", "logging/setLevel", "resources/subscribe",
                                  "resources/unsubscribe", "notifications/initialized"}) {
    EXPECT_EQ(era(legacy_only), "L") << legacy_only;
  }
  for (const char* modern_only : {"server/discover", "subscriptions/listen", "tasks/update"}) {
    EXPECT_EQ(era(modern_only), "M") << modern_only;
  }
  // The 2025-11-25 tasks utility's methods (legacy_task_methods.cpp); tasks/list and
  // tasks/result are removed from the modern extension (task_methods.cpp).
  for (const char* legacy_only : {"tasks/list", "tasks/result"}) {
    EXPECT_EQ(era(legacy_only), "L") << legacy_only;
  }
  for (const char* both : {"tools/list", "tools/call", "resources/list", "resources/templates/list",
                           "resources/read", "prompts/list", "prompts/get", "completion/complete",
                           "notifications/cancelled", "tasks/get", "tasks/cancel"}) {
    EXPECT_EQ(era(both), "LM") << both;
  }
  EXPECT_EQ(FindMethod(""), nullptr);
}

TEST(MethodTableTest, NamesHeadersCachingAndStreaming) {
  EXPECT_STREQ(FindMethod("tools/call")->name_param, "name");
  EXPECT_STREQ(FindMethod("prompts/get")->name_param, "name");
  EXPECT_STREQ(FindMethod("resources/read")->name_param, "uri");
  EXPECT_STREQ(FindMethod("tasks/get")->name_param, "taskId");
  EXPECT_EQ(FindMethod("tools/list")->name_param, nullptr);
  // Cacheable results (server/utilities/caching), and only those.
  std::set<std::string> cacheable;
  for (const char* name : {"server/discover", "tools/list", "prompts/list", "resources/list",
                           "resources/templates/list", "resources/read", "tools/call",
                           "prompts/get", "subscriptions/listen", "completion/complete"}) {
    if (FindMethod(name)->cache) cacheable.insert(name);
  }
  EXPECT_EQ(cacheable, (std::set<std::string>{"server/discover", "tools/list", "prompts/list",
                                              "resources/list", "resources/templates/list",
                                              "resources/read"}));
  EXPECT_FALSE(FindMethod("resources/read")->cache->public_scope);  // the caller's data
  EXPECT_TRUE(FindMethod("tools/list")->cache->public_scope);
  EXPECT_TRUE(FindMethod("tools/call")->streams);
  EXPECT_TRUE(FindMethod("subscriptions/listen")->long_lived);
  EXPECT_FALSE(FindMethod("resources/read")->inline_answer);  // disk: on a worker
}

TEST(TypedParamsTest, ErrorsNameTheMethodAndTheField) {
  EXPECT_EQ(ErrorOf<CallToolParams>(Json::object(), "tools/call"),
            "tools/call needs params.name (string)");
  EXPECT_EQ(ErrorOf<CallToolParams>({{"name", 3}}, "tools/call"),
            "tools/call needs params.name (string)");
  EXPECT_EQ(ErrorOf<CallToolParams>({{"name", "t"}, {"arguments", "x"}}, "tools/call"),
            "tools/call params.arguments must be an object");
  EXPECT_EQ(ErrorOf<CallToolParams>({{"name", "t"}, {"requestState", 5}}, "tools/call"),
            "tools/call params.requestState must be a string");
  EXPECT_EQ(ErrorOf<UriParams>({{"uri", nullptr}}, "resources/read"),
            "resources/read needs params.uri (string)");
  EXPECT_EQ(ErrorOf<ListParams>({{"cursor", 1}}, "tools/list"),
            "tools/list params.cursor must be a string");
  EXPECT_EQ(ErrorOf<InitializeParams>(Json::object(), "initialize"),
            "initialize needs params.protocolVersion (string)");
  EXPECT_NE(ErrorOf<SetLevelParams>({{"level", "loud"}}, "logging/setLevel")
                .find("Invalid log level: \"loud\"; use debug, info"),
            std::string::npos);
  EXPECT_EQ(ErrorOf<ListenParams>({{"notifications", {{"toolsListChanged", "yes"}}}},
                                  "subscriptions/listen"),
            "subscriptions/listen params.notifications.toolsListChanged must be true or false");
  EXPECT_EQ(ErrorOf<ListenParams>({{"notifications", {{"resourceSubscriptions", {1}}}}},
                                  "subscriptions/listen"),
            "subscriptions/listen params.notifications.resourceSubscriptions must be an array of "
            "URIs");
  EXPECT_EQ(ErrorOf<CancelledParams>({{"requestId", nullptr}}, "notifications/cancelled"),
            "notifications/cancelled needs params.requestId (string or integer)");
}

TEST(TypedParamsTest, ReadEveryMemberAndIgnoreUnknownOnes) {
  auto call = CallToolParams::FromJson({{"name", "t"},
                                        {"arguments", {{"a", 1}}},
                                        {"inputResponses", {{"k", {{"action", "accept"}}}}},
                                        {"requestState", "s"},
                                        {"task", {{"ttl", 1}}}},  // a later member: ignored
                                       "tools/call");
  ASSERT_TRUE(call.ok()) << call.error().message;
  EXPECT_EQ(call->name, "t");
  EXPECT_EQ(call->arguments, (Json{{"a", 1}}));
  EXPECT_EQ(call->inputs.responses, (Json{{"k", {{"action", "accept"}}}}));
  EXPECT_EQ(call->inputs.request_state, "s");
  auto listen = ListenParams::FromJson(
      {{"notifications",
        {{"toolsListChanged", true}, {"resourceSubscriptions", {"imgmcp://sessions/a"}}}}},
      "subscriptions/listen");
  ASSERT_TRUE(listen.ok());
  EXPECT_TRUE(listen->filter.tools_list_changed);
  EXPECT_FALSE(listen->filter.resources_list_changed);
  EXPECT_EQ(listen->filter.resource_subscriptions, std::vector<std::string>{"imgmcp://sessions/a"});
  auto level = SetLevelParams::FromJson({{"level", "warning"}}, "logging/setLevel");
  ASSERT_TRUE(level.ok());
  EXPECT_EQ(level->level, LogLevel::kWarning);
}

TEST(ModernEnvelopeTest, RequiredKeysAndTheirTypes) {
  ModernEnvelope env;
  auto error_of = [&](const Json& params) {
    auto e = ReadModernEnvelope(params, &env);
    EXPECT_TRUE(e.has_value()) << params.dump();
    return e.value_or(RpcError{});
  };
  RpcError no_meta = error_of(Json::object());
  EXPECT_EQ(no_meta.code, rpc_error::kInvalidParams);
  EXPECT_TRUE(no_meta.before_dispatch);
  EXPECT_NE(no_meta.message.find("params._meta is required"), std::string::npos);
  EXPECT_NE(error_of({{"_meta", {{"io.modelcontextprotocol/clientCapabilities", Json::object()}}}})
                .message.find("io.modelcontextprotocol/protocolVersion is required"),
            std::string::npos);
  EXPECT_NE(error_of({{"_meta", {{"io.modelcontextprotocol/protocolVersion", "2026-07-28"}}}})
                .message.find("io.modelcontextprotocol/clientCapabilities is required"),
            std::string::npos);
  EXPECT_NE(error_of({{"_meta", Envelope({{"io.modelcontextprotocol/clientInfo", "me"}})}})
                .message.find("clientInfo must be an object"),
            std::string::npos);
  EXPECT_NE(error_of({{"_meta", Envelope({{"io.modelcontextprotocol/logLevel", "loud"}})}})
                .message.find("Invalid log level"),
            std::string::npos);

  RpcError unsupported =
      error_of({{"_meta", Envelope({{"io.modelcontextprotocol/protocolVersion", "v999.0.0"}})}});
  EXPECT_EQ(unsupported.code, rpc_error::kUnsupportedProtocolVersion);
  EXPECT_TRUE(unsupported.before_dispatch);
  EXPECT_EQ(unsupported.data->at("requested"), "v999.0.0");
  EXPECT_EQ(unsupported.data->at("supported"),
            Json({"2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26"}));

  ASSERT_FALSE(ReadModernEnvelope(
                   {{"_meta", Envelope({{"io.modelcontextprotocol/logLevel", "notice"},
                                        {"io.modelcontextprotocol/clientInfo", {{"name", "c"}}},
                                        {"io.modelcontextprotocol/clientCapabilities",
                                         {{"sampling", Json::object()}}}})}},
                   &env)
                   .has_value());
  EXPECT_EQ(env.protocol_version, "2026-07-28");
  EXPECT_EQ(env.log_level, LogLevel::kNotice);
  EXPECT_TRUE(env.client_capabilities.contains("sampling"));
  EXPECT_EQ(env.client_info->at("name"), "c");
  EXPECT_TRUE(HasEnvelopeClaim({{"_meta", {{"io.modelcontextprotocol/protocolVersion", 7}}}}));
  EXPECT_FALSE(HasEnvelopeClaim({{"_meta", {{"progressToken", 1}}}}));
  EXPECT_EQ(ReadProgressToken({{"_meta", {{"progressToken", 0}}}}), Json(0));
  EXPECT_FALSE(ReadProgressToken({{"_meta", {{"progressToken", 1.5}}}}).has_value());
}

TEST(ModernResultsTest, CarryResultTypeCachingAndServerInfo) {
  const ServerIdentity me{"imgmcp", "", "1.2.3"};
  Json list = ListResult("tools", Json::array(), std::nullopt);
  DecorateModernResult(list, CachePolicy{300000, true}, me);
  EXPECT_EQ(list["resultType"], "complete");
  EXPECT_EQ(list["ttlMs"], 300000);
  EXPECT_EQ(list["cacheScope"], "public");
  EXPECT_EQ(list["_meta"]["io.modelcontextprotocol/serverInfo"],
            (Json{{"name", "imgmcp"}, {"version", "1.2.3"}}));
  // An interim result is not cacheable (server/utilities/caching).
  Json interim = InputRequiredResult({{"k", {{"method", "roots/list"}}}}, "state");
  DecorateModernResult(interim, CachePolicy{300000, true}, me);
  EXPECT_EQ(interim["resultType"], "input_required");
  EXPECT_FALSE(interim.contains("ttlMs"));
  EXPECT_EQ(interim["requestState"], "state");
  Json call = {{"content", Json::array()}, {"_meta", {{"mine", 1}}}};
  DecorateModernResult(call, std::nullopt, me);
  EXPECT_EQ(call["_meta"]["mine"], 1);  // the result's own _meta is kept
  EXPECT_FALSE(call.contains("cacheScope"));
}

TEST(RoutingFactsTest, WhatATransportNeedsWithoutTakingTheMessageApart) {
  Json call = {{"jsonrpc", "2.0"},
               {"id", 7},
               {"method", "tools/call"},
               {"params", {{"name", "get_image"}, {"_meta", Envelope()}}}};
  RequestFacts facts = ReadRequestFacts(call);
  EXPECT_EQ(facts.kind, IncomingMessage::Kind::kRequest);
  EXPECT_EQ(facts.id, 7);
  EXPECT_EQ(facts.method, "tools/call");
  EXPECT_TRUE(facts.envelope_claim);
  EXPECT_EQ(facts.claimed_version, "2026-07-28");
  EXPECT_EQ(facts.name, "get_image");
  ASSERT_NE(facts.info, nullptr);
  EXPECT_TRUE(facts.info->streams);
  RequestFacts note = ReadRequestFacts(
      {{"jsonrpc", "2.0"}, {"method", "notifications/cancelled"}, {"params", {{"requestId", 1}}}});
  EXPECT_EQ(note.kind, IncomingMessage::Kind::kNotification);
  EXPECT_FALSE(note.envelope_claim);
  EXPECT_EQ(ReadRequestFacts(Json::array()).kind, IncomingMessage::Kind::kInvalid);
  EXPECT_EQ(ReadRequestFacts({{"jsonrpc", "2.0"}, {"id", 1}, {"result", {}}}).kind,
            IncomingMessage::Kind::kResponse);
}

TEST(RpcErrorsTest, OneMappingAndTheModernCodes) {
  EXPECT_EQ(ToRpcError(Error(ErrorCode::kInvalidArgument, "bad")).code, rpc_error::kInvalidParams);
  EXPECT_EQ(ToRpcError(Error(ErrorCode::kNotFound, "no")).code, rpc_error::kInvalidParams);
  EXPECT_EQ(ToRpcError(Error(ErrorCode::kInternal, "x")).code, rpc_error::kInternalError);
  EXPECT_EQ(ResourceNotFound("a://x", false).code, rpc_error::kResourceNotFound);
  RpcError modern = ResourceNotFound("a://x", true);
  EXPECT_EQ(modern.code, rpc_error::kInvalidParams);
  EXPECT_EQ(modern.data->at("uri"), "a://x");
  RpcError missing = MissingClientCapability({{"sampling", Json::object()}});
  EXPECT_EQ(missing.code, -32021);
  EXPECT_EQ(missing.data->at("requiredCapabilities"), (Json{{"sampling", Json::object()}}));
  EXPECT_EQ(HeaderMismatch("x").code, -32020);
  EXPECT_TRUE(MethodNotFound("x").before_dispatch);
  Json bare = MakeErrorResponse(nullptr, InvalidRequest("x"), /*omit_null_id=*/true);
  EXPECT_FALSE(bare.contains("id"));  // the modern schema has no null ids
  EXPECT_TRUE(MakeErrorResponse(nullptr, InvalidRequest("x"))["id"].is_null());
}

}  // namespace
}  // namespace imgmcp::mcp
