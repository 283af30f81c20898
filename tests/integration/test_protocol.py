"""The MCP protocol core over real stdio pipes: lifecycle, framing, errors, concurrency, EOF.

Every test spawns the real binary (with --conformance-fixtures for its test tools) through
mcp_harness.ServerProcess, which kills it and removes its temp dir on every path.
"""
import json
import random
import unittest

from mcp_harness import LATEST_PROTOCOL, ServerProcess

FIXTURES = ("--conformance-fixtures",)
SUPPORTED = ("2025-11-25", "2025-06-18", "2025-03-26")
# How long the server waits for the client's answer to its own request (ServerOptions
# client_request_timeout; no flag sets it).
CLIENT_REQUEST_TIMEOUT = 60.0


def is_response(msg, rid):
    return isinstance(msg, dict) and msg.get("id") == rid and "method" not in msg


def is_method(msg, method):
    return isinstance(msg, dict) and msg.get("method") == method


class ProtocolTest(unittest.TestCase):
    def server(self, *args):
        srv = ServerProcess(args=FIXTURES + args)
        self.addCleanup(srv.__exit__, None, None, None)
        return srv

    def assert_stdout_all_json(self, srv):
        for line in srv.raw_stdout:
            self.assertTrue(line.endswith(b"\n"), line[:200])
            json.loads(line)  # raises on anything that is not one JSON value

    # --- lifecycle ----------------------------------------------------------------------------
    def test_discover_probe_before_initialize_then_initialize(self):
        # Claude Code's probe: a modern server/discover is answered; an initialize on the same
        # pipe still opens a legacy session (a dual-era server, 2026-07-28 basic/versioning).
        srv = self.server()
        srv.send({"jsonrpc": "2.0", "id": "server-discover-probe-1", "method": "server/discover",
                  "params": {"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                                       "io.modelcontextprotocol/clientCapabilities": {}}}})
        probe = srv.wait_for(lambda m: is_response(m, "server-discover-probe-1"))
        self.assertIn("2026-07-28", probe["result"]["supportedVersions"])
        self.assertIn(LATEST_PROTOCOL, probe["result"]["supportedVersions"])
        # without _meta it is a legacy request, and the legacy era has no server/discover
        self.assertEqual(srv.request("server/discover")["error"]["code"], -32601)
        # other early requests are answered too, and never end the process
        self.assertIn("result", srv.request("ping"))
        self.assertEqual(srv.request("tools/list")["error"]["code"], -32600)
        self.assertIsNone(srv.proc.poll())
        result = srv.initialize()
        self.assertEqual(result["protocolVersion"], LATEST_PROTOCOL)
        self.assertEqual(result["serverInfo"]["name"], "imgmcp")
        caps = result["capabilities"]
        self.assertEqual(caps["tools"], {"listChanged": False})
        self.assertEqual(caps["resources"], {"subscribe": True, "listChanged": True})
        self.assertIn("logging", caps)
        tools = srv.request("tools/list")["result"]["tools"]
        names = {t["name"] for t in tools}
        for expected in ("test_simple_text", "test_image_content", "test_error_handling",
                         "test_tool_with_logging", "test_tool_with_progress"):
            self.assertIn(expected, names)
        for tool in tools:
            self.assertIsInstance(tool["description"], str)
            self.assertEqual(tool["inputSchema"]["type"], "object")

    def test_version_negotiation(self):
        for requested, expected in [(v, v) for v in SUPPORTED] + [("2024-11-05", LATEST_PROTOCOL),
                                                                  ("2099-01-01", LATEST_PROTOCOL)]:
            with self.subTest(requested=requested), ServerProcess(args=FIXTURES) as srv:
                result = srv.initialize(version=requested)
                self.assertEqual(result["protocolVersion"], expected)
                self.assertIn("result", srv.request("ping"))

    # --- framing --------------------------------------------------------------------------------
    def test_20_mib_message_in_random_small_chunks(self):
        srv = self.server()
        srv.initialize()
        payload = "x" * (20 * 1024 * 1024)
        msg = {"jsonrpc": "2.0", "id": 4242, "method": "tools/call",
               "params": {"name": "test_simple_text", "arguments": {"blob": payload}}}
        data = json.dumps(msg, separators=(",", ":")).encode() + b"\n"
        srv.send_raw_chunked(data, random.Random(7), max_chunk=64 * 1024)
        resp = srv.wait_for(lambda m: is_response(m, 4242), timeout=60)
        self.assertEqual(resp["result"]["content"][0]["text"],
                         "This is a simple text response for testing.")

    def test_over_64_mib_line_is_refused_and_the_stream_resyncs(self):
        srv = self.server()
        srv.initialize()
        big = b'{"jsonrpc":"2.0","id":99,"method":"ping","params":{"pad":"' + \
            b"y" * (65 * 1024 * 1024) + b'"}}\n'
        for i in range(0, len(big), 1 << 20):
            srv.send_raw(big[i:i + (1 << 20)])
        refused = srv.wait_for(lambda m: isinstance(m, dict) and "error" in m, timeout=60)
        self.assertEqual(refused["error"]["code"], -32600)
        self.assertIsNone(refused["id"])
        self.assertIn("result", srv.request("ping"))
        self.assertFalse(any(is_response(m, 99) for m in srv.pending))

    def test_crlf_and_blank_lines(self):
        srv = self.server()
        srv.send_raw(b"\r\n\n" + json.dumps({
            "jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                       "clientInfo": {"name": "crlf", "version": "0"}}}).encode() + b"\r\n")
        init = srv.wait_for(lambda m: is_response(m, 1))
        self.assertEqual(init["result"]["protocolVersion"], "2025-06-18")
        srv.send_raw(b'{"jsonrpc":"2.0","id":2,"method":"ping"}\r\n')
        self.assertEqual(srv.wait_for(lambda m: is_response(m, 2))["result"], {})

    # --- errors ---------------------------------------------------------------------------------
    def test_invalid_json_is_a_parse_error_with_null_id(self):
        srv = self.server()
        srv.initialize()
        srv.send_raw(b'{"jsonrpc":"2.0","id":5,"method":"ping"\n')
        err = srv.wait_for(lambda m: isinstance(m, dict) and "error" in m)
        self.assertEqual(err["error"]["code"], -32700)
        self.assertIsNone(err["id"])
        srv.send_raw(b"\xff\xfe not utf8\n")
        err = srv.wait_for(lambda m: isinstance(m, dict) and "error" in m)
        self.assertEqual(err["error"]["code"], -32700)
        self.assertIn("result", srv.request("ping"))

    def test_invalid_request_shapes(self):
        srv = self.server()
        srv.initialize()
        cases = [
            (b'42', None, -32600),
            (b'"hello"', None, -32600),
            (b'{"jsonrpc":"2.0","id":11}', 11, -32600),
            (b'{"jsonrpc":"1.0","id":12,"method":"ping"}', 12, -32600),
            (b'{"id":13,"method":"ping"}', 13, -32600),
            (b'{"jsonrpc":"2.0","id":14,"method":7}', 14, -32600),
            (b'{"jsonrpc":"2.0","id":null,"method":"ping"}', None, -32600),
            (b'{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}', None, -32600),
            (b'{"jsonrpc":"2.0","id":15,"method":"tools/list","params":[1]}', 15, -32602),
        ]
        for raw, rid, code in cases:
            with self.subTest(raw=raw):
                srv.send_raw(raw + b"\n")
                err = srv.wait_for(lambda m: isinstance(m, dict) and "error" in m
                                   and m.get("id") == rid)
                self.assertEqual(err["error"]["code"], code)
        self.assertIsNone(srv.proc.poll())

    def test_unknown_method_and_unknown_tool(self):
        srv = self.server()
        srv.initialize()
        self.assertEqual(srv.request("no/such/method")["error"]["code"], -32601)
        resp = srv.call_tool("no_such_tool")
        self.assertEqual(resp["error"]["code"], -32602)
        self.assertEqual(resp["error"]["message"], "Unknown tool: no_such_tool")
        resp = srv.request("tools/call", {"name": "test_simple_text", "arguments": [1]})
        self.assertEqual(resp["error"]["code"], -32602)

    def test_tool_results(self):
        srv = self.server()
        srv.initialize()
        text = srv.call_tool("test_simple_text")["result"]
        self.assertEqual(text, {"content": [{"type": "text",
                                             "text": "This is a simple text response for testing."}],
                                "isError": False})
        image = srv.call_tool("test_image_content")["result"]["content"][0]
        self.assertEqual((image["type"], image["mimeType"]), ("image", "image/png"))
        error = srv.call_tool("test_error_handling")["result"]
        self.assertTrue(error["isError"])
        self.assertEqual(error["content"][0]["type"], "text")

    # --- batches --------------------------------------------------------------------------------
    def test_batches_only_under_2025_03_26(self):
        batch = [{"jsonrpc": "2.0", "id": "b1", "method": "ping"},
                 {"jsonrpc": "2.0", "method": "notifications/initialized"},
                 {"jsonrpc": "2.0", "id": "b2", "method": "tools/call",
                  "params": {"name": "test_simple_text", "arguments": {}}}]
        with ServerProcess(args=FIXTURES) as srv:
            srv.initialize(version="2025-03-26")
            srv.send(batch)
            answer = srv.wait_for(lambda m: isinstance(m, list))
            self.assertEqual(sorted(r["id"] for r in answer), ["b1", "b2"])
        with ServerProcess(args=FIXTURES) as srv:
            srv.initialize(version="2025-11-25")
            srv.send(batch)
            err = srv.wait_for(lambda m: isinstance(m, dict) and "error" in m)
            self.assertEqual(err["error"]["code"], -32600)
            self.assertIsNone(err["id"])
            self.assertFalse(any(is_response(m, "b1") for m in srv.pending))

    # --- concurrency, progress, cancellation, logging ----------------------------------------
    def test_ping_answered_while_a_call_waits(self):
        srv = self.server()
        srv.initialize(capabilities={"sampling": {}})
        srv.send({"jsonrpc": "2.0", "id": "slow", "method": "tools/call",
                  "params": {"name": "test_sampling", "arguments": {"prompt": "hello"}}})
        # The call now waits for us (the client) to answer sampling/createMessage.
        sampling = srv.wait_for(lambda m: is_method(m, "sampling/createMessage"))
        self.assertEqual(sampling["params"]["messages"][0]["content"]["text"], "hello")
        self.assertEqual(srv.request("ping")["result"], {})
        self.assertEqual(srv.call_tool("test_simple_text")["result"]["isError"], False)
        srv.send({"jsonrpc": "2.0", "id": sampling["id"],
                  "result": {"role": "assistant", "model": "m",
                             "content": {"type": "text", "text": "hi there"}}})
        resp = srv.wait_for(lambda m: is_response(m, "slow"))
        self.assertEqual(resp["result"]["content"][0]["text"], "LLM response: hi there")

    def test_cancelled_call_gets_no_response(self):
        srv = self.server()
        srv.initialize(capabilities={"sampling": {}})
        srv.send({"jsonrpc": "2.0", "id": 77, "method": "tools/call",
                  "params": {"name": "test_sampling", "arguments": {"prompt": "p"}}})
        sampling = srv.wait_for(lambda m: is_method(m, "sampling/createMessage"))
        srv.notify("notifications/cancelled", {"requestId": 12345})  # unknown: ignored
        srv.notify("notifications/cancelled", {"requestId": 77, "reason": "user"})
        # The call gives up its own pending request to us...
        cancel = srv.wait_for(lambda m: is_method(m, "notifications/cancelled"))
        self.assertEqual(cancel["params"]["requestId"], sampling["id"])
        # ...and is never answered.
        self.assertEqual(srv.request("ping")["result"], {})
        self.assertEqual(srv.call_tool("test_simple_text")["result"]["isError"], False)
        self.assertFalse(any(is_response(m, 77) for m in srv.pending))

    def test_progress_notifications_echo_the_token(self):
        srv = self.server()
        srv.initialize()
        for token in ("tok", 31):
            resp = srv.call_tool("test_tool_with_progress", meta={"progressToken": token})
            self.assertEqual(resp["result"]["content"][0]["text"], str(token))
            progress = [m["params"] for m in srv.notifications("notifications/progress")
                        if m["params"]["progressToken"] == token]
            self.assertEqual([p["progress"] for p in progress], [0, 50, 100])
            self.assertTrue(all(p["total"] == 100 for p in progress))
            self.assertIs(type(progress[0]["progressToken"]), type(token))
        # no token, no progress
        srv.pending.clear()
        srv.call_tool("test_tool_with_progress")
        self.assertEqual(srv.notifications("notifications/progress"), [])

    def test_logging_set_level(self):
        srv = self.server()
        srv.initialize()
        self.assertEqual(srv.request("logging/setLevel", {"level": "debug"})["result"], {})
        srv.call_tool("test_tool_with_logging")
        logs = [m["params"] for m in srv.notifications("notifications/message")]
        self.assertEqual([l["data"] for l in logs], ["Tool execution started",
                                                    "Tool processing data",
                                                    "Tool execution completed"])
        self.assertTrue(all(l["level"] == "info" for l in logs))
        srv.pending.clear()
        self.assertEqual(srv.request("logging/setLevel", {"level": "error"})["result"], {})
        srv.call_tool("test_tool_with_logging")
        self.assertEqual(srv.notifications("notifications/message"), [])
        self.assertEqual(srv.request("logging/setLevel", {"level": "loud"})["error"]["code"],
                         -32602)

    def test_many_concurrent_calls(self):
        # Each call waits for the client's answer to its sampling/createMessage. All 100 of
        # those requests arrive before any is answered, so the 100 calls run side by side, not
        # one after another; answered in reverse order, each call gets its own answer.
        srv = self.server()
        srv.initialize(capabilities={"sampling": {}})
        ids = [f"c{i}" for i in range(100)]
        for i, rid in enumerate(ids):
            srv.send({"jsonrpc": "2.0", "id": rid, "method": "tools/call",
                      "params": {"name": "test_sampling", "arguments": {"prompt": f"p{i}"}}})
        asks = [srv.take(lambda m: is_method(m, "sampling/createMessage"), timeout=60)
                for _ in ids]
        prompts = [a["params"]["messages"][0]["content"]["text"] for a in asks]
        self.assertEqual(sorted(prompts), sorted(f"p{i}" for i in range(100)))
        self.assertFalse([m for m in srv.pending if "id" in m and "method" not in m],
                         "a call answered before its sampling request was")
        for ask, prompt in reversed(list(zip(asks, prompts))):
            srv.send({"jsonrpc": "2.0", "id": ask["id"],
                      "result": {"role": "assistant", "model": "m",
                                 "content": {"type": "text", "text": f"re {prompt}"}}})
        for i, rid in enumerate(ids):
            resp = srv.take(lambda m, rid=rid: is_response(m, rid), timeout=60)
            self.assertEqual(resp["result"]["content"][0]["text"], f"LLM response: re p{i}")

    def test_resources_and_prompts_fixtures(self):
        srv = self.server()
        srv.initialize()
        uris = [r["uri"] for r in srv.request("resources/list")["result"]["resources"]]
        self.assertIn("test://static-text", uris)
        read = srv.request("resources/read", {"uri": "test://template/123/data"})["result"]
        self.assertIn("123", read["contents"][0]["text"])
        self.assertEqual(srv.request("resources/read", {"uri": "test://nope"})["error"]["code"],
                         -32002)
        self.assertEqual(srv.request("resources/subscribe",
                                     {"uri": "test://watched-resource"})["result"], {})
        prompt = srv.request("prompts/get", {"name": "test_prompt_with_arguments",
                                             "arguments": {"arg1": "a", "arg2": "b"}})["result"]
        self.assertIn("arg1='a'", prompt["messages"][0]["content"]["text"])

    # --- stdout hygiene and shutdown ------------------------------------------------------------
    def test_every_stdout_line_is_json(self):
        srv = self.server()
        srv.send_raw(b"garbage\n")
        srv.initialize()
        srv.request("logging/setLevel", {"level": "debug"})
        srv.call_tool("test_tool_with_logging")
        srv.call_tool("test_tool_with_progress", meta={"progressToken": 1})
        srv.call_tool("test_multiple_content_types")
        srv.call_tool("no_such_tool")
        srv.close_stdin()
        self.assertEqual(srv.wait_exit(timeout=5), 0)
        srv.drain_until_eof()
        self.assertGreater(len(srv.raw_stdout), 10)
        self.assert_stdout_all_json(srv)

    def test_eof_exits_with_a_call_in_flight_without_waiting_for_its_request(self):
        # The call waits for our answer to its sampling/createMessage, which never comes: EOF
        # ends the process with that request unanswered, well before the request would time out
        # (the server's client-request timeout) — EOF cancels the call, it does not wait it out.
        srv = self.server()
        srv.initialize(capabilities={"sampling": {}})
        srv.send({"jsonrpc": "2.0", "id": "pending", "method": "tools/call",
                  "params": {"name": "test_sampling", "arguments": {"prompt": "never answered"}}})
        srv.wait_for(lambda m: is_method(m, "sampling/createMessage"))
        srv.close_stdin()
        self.assertEqual(srv.wait_exit(timeout=CLIENT_REQUEST_TIMEOUT / 2), 0)
        srv.drain_until_eof()
        self.assert_stdout_all_json(srv)

    def test_eof_with_no_work_exits_cleanly(self):
        srv = self.server()
        srv.initialize()
        srv.close_stdin()
        self.assertEqual(srv.wait_exit(), 0)
        srv.drain_until_eof()
        self.assertEqual(srv.pending, [])


if __name__ == "__main__":
    unittest.main()
