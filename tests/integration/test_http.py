"""Streamable HTTP transport against the real binary (stdlib http.client only).

Each test class starts `imgmcp --http 127.0.0.1:0 --conformance-fixtures` with a temp data dir,
reads the bound port from the "listening on http://HOST:PORT/mcp" stderr line, and stops it with
SIGTERM (the process must exit promptly, even with streams open). The process and SSE helpers
are tests/support/imgmcp_process.py's.
"""
import concurrent.futures
import http.client
import json
import os
import socket
import sys
import threading
import time
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from imgmcp_process import HttpProcess, SseReader  # noqa: E402,F401  (tests/support)

TIMEOUT = 20.0
LATEST = "2025-11-25"
ACCEPT_BOTH = "application/json, text/event-stream"
class HttpServer(HttpProcess):
    """One imgmcp process serving HTTP with the conformance fixtures on an OS-chosen port."""

    def __init__(self, *extra_args, env=None):
        super().__init__("--conformance-fixtures", *extra_args, env=env)

    def stop(self, timeout=10.0):
        """SIGTERM; returns the exit status (fails loudly if the process hangs)."""
        return self.close(timeout=timeout)

    # --- requests ---------------------------------------------------------------------------
    def request(self, method, body=None, session=None, headers=None, conn=None):
        """One request; returns (status, headers dict (lower-case keys), body bytes)."""
        own = conn is None
        conn = conn or self.connection()
        try:
            h = {"Host": "127.0.0.1:%d" % self.port}
            if method == "POST":
                h.update({"Content-Type": "application/json", "Accept": ACCEPT_BOTH})
            if session:
                h["Mcp-Session-Id"] = session
            h.update(headers or {})
            h = {k: v for k, v in h.items() if v is not None}
            data = body if isinstance(body, (bytes, type(None))) else json.dumps(body).encode()
            conn.request(method, "/mcp", body=data, headers=h)
            resp = conn.getresponse()
            return resp.status, {k.lower(): v for k, v in resp.getheaders()}, resp.read()
        finally:
            if own:
                conn.close()

    def open(self, method, body=None, session=None, headers=None):
        """Starts a request and returns the live response (for SSE), with its connection."""
        conn = self.connection()
        h = {"Host": "127.0.0.1:%d" % self.port}
        if method == "POST":
            h.update({"Content-Type": "application/json", "Accept": ACCEPT_BOTH})
        else:
            h["Accept"] = "text/event-stream"
        if session:
            h["Mcp-Session-Id"] = session
        h.update(headers or {})
        conn.request(method, "/mcp", body=None if body is None else json.dumps(body).encode(),
                     headers=h)
        return conn.getresponse(), conn

    def initialize(self, version=LATEST, capabilities=None):
        status, headers, body = self.request("POST", {
            "jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {"protocolVersion": version, "capabilities": capabilities or {},
                       "clientInfo": {"name": "test_http", "version": "1"}}})
        assert status == 200, (status, body)
        session = headers["mcp-session-id"]
        status, _, _ = self.request("POST", {"jsonrpc": "2.0",
                                             "method": "notifications/initialized"},
                                    session=session)
        assert status == 202, status
        return session

    def call(self, session, id_, method, params=None, headers=None):
        """A request answered as JSON or SSE; returns the list of JSON-RPC messages received."""
        resp, conn = self.open("POST", {"jsonrpc": "2.0", "id": id_, "method": method,
                                        "params": params or {}}, session=session,
                               headers=headers)
        try:
            if resp.status != 200:
                raise AssertionError((resp.status, resp.read()))
            if resp.getheader("Content-Type", "").startswith("application/json"):
                return [json.loads(resp.read())]
            reader = SseReader(resp)
            messages = []
            for event in reader.events():
                if event.get("data"):
                    messages.append(json.loads(event["data"]))
            return messages
        finally:
            conn.close()


def error_of(body):
    return json.loads(body)["error"]


class HttpProtocolTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.server = HttpServer()

    @classmethod
    def tearDownClass(cls):
        cls.server.stop()

    def test_healthz(self):
        conn = self.server.connection()
        conn.request("GET", "/healthz")
        resp = conn.getresponse()
        self.assertEqual(resp.status, 200)
        self.assertEqual(resp.read(), b"ok")
        conn.close()

    def test_initialize_mints_a_random_session_id(self):
        a = self.server.initialize()
        b = self.server.initialize()
        self.assertRegex(a, r"^[0-9a-f]{32}$")
        self.assertNotEqual(a, b)

    def test_missing_session_is_400(self):
        status, _, body = self.server.request("POST", {"jsonrpc": "2.0", "id": 1,
                                                       "method": "tools/list"})
        self.assertEqual(status, 400)
        self.assertIn("Mcp-Session-Id header is required", error_of(body)["message"])
        status, _, _ = self.server.request("GET", headers={"Accept": "text/event-stream"})
        self.assertEqual(status, 400)
        status, _, _ = self.server.request("DELETE")
        self.assertEqual(status, 400)

    def test_unknown_and_deleted_sessions_are_404(self):
        status, _, body = self.server.request("POST", {"jsonrpc": "2.0", "id": 1,
                                                       "method": "ping"}, session="f" * 32)
        self.assertEqual(status, 404)
        self.assertEqual(error_of(body)["code"], -32001)
        self.assertEqual(error_of(body)["message"], "Session not found")
        session = self.server.initialize()
        status, _, _ = self.server.request("POST", {"jsonrpc": "2.0", "id": 1, "method": "ping"},
                                           session=session)
        self.assertEqual(status, 200)
        status, _, _ = self.server.request("DELETE", session=session)
        self.assertEqual(status, 200)
        for method, body in (("POST", {"jsonrpc": "2.0", "id": 2, "method": "ping"}),
                             ("GET", None), ("DELETE", None)):
            status, _, _ = self.server.request(method, body, session=session,
                                               headers={"Accept": ACCEPT_BOTH})
            self.assertEqual(status, 404, method)

    def test_foreign_host_and_origin_are_403(self):
        init = {"jsonrpc": "2.0", "id": 0, "method": "initialize",
                "params": {"protocolVersion": LATEST, "capabilities": {},
                           "clientInfo": {"name": "x", "version": "1"}}}
        for headers in ({"Host": "evil.example.com"},
                        {"Host": "evil.example.com:%d" % self.server.port},
                        {"Origin": "http://evil.example.com"},
                        {"Origin": "null"},
                        # A page on another local port is another origin (another local app).
                        {"Origin": "http://127.0.0.1:1234"},
                        {"Origin": "http://localhost"}):
            status, _, body = self.server.request("POST", init, headers=headers)
            self.assertEqual(status, 403, headers)
            self.assertEqual(error_of(body)["code"], -32000)
        for headers in ({"Host": "localhost:%d" % self.server.port,
                         "Origin": "http://localhost:%d" % self.server.port},
                        {"Origin": "http://127.0.0.1:%d" % self.server.port},
                        {"Host": "[::1]:1"}):
            status, _, _ = self.server.request("POST", init, headers=headers)
            self.assertEqual(status, 200, headers)

    def test_accept_and_content_type(self):
        session = self.server.initialize()
        ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
        status, _, _ = self.server.request("POST", ping, session=session,
                                           headers={"Accept": "application/json"})
        self.assertEqual(status, 406)
        status, _, _ = self.server.request("POST", ping, session=session,
                                           headers={"Content-Type": "text/plain"})
        self.assertEqual(status, 415)
        status, _, _ = self.server.request("GET", session=session,
                                           headers={"Accept": "application/json"})
        self.assertEqual(status, 406)

    def test_bad_json_is_400_parse_error(self):
        session = self.server.initialize()
        status, _, body = self.server.request("POST", b"{not json", session=session)
        self.assertEqual(status, 400)
        self.assertEqual(error_of(body)["code"], -32700)
        # A raw NUL ends the parser's input: the valid-looking prefix must not be answered.
        status, _, body = self.server.request(
            "POST", b'{"jsonrpc":"2.0","id":1,"method":"ping"}\x00[[', session=session)
        self.assertEqual(status, 400)
        self.assertEqual(error_of(body)["code"], -32700)
        deep = b"[" * 1000 + b"]" * 1000
        status, _, body = self.server.request("POST", deep, session=session)
        self.assertEqual(status, 400)
        self.assertEqual(error_of(body)["code"], -32600)

    def test_protocol_version_header(self):
        session = self.server.initialize()
        ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
        status, _, body = self.server.request("POST", ping, session=session,
                                              headers={"MCP-Protocol-Version": "1999-01-01"})
        self.assertEqual(status, 400)
        self.assertIn("1999-01-01", error_of(body)["message"])
        for version in ("2025-03-26", "2025-06-18", LATEST, None):
            status, _, _ = self.server.request("POST", ping, session=session,
                                               headers={"MCP-Protocol-Version": version})
            self.assertEqual(status, 200, version)

    def test_body_over_the_limit_is_413(self):
        session = self.server.initialize()
        conn = self.server.connection()
        conn.putrequest("POST", "/mcp", skip_host=True, skip_accept_encoding=True)
        for k, v in (("Host", "127.0.0.1:%d" % self.server.port),
                     ("Content-Type", "application/json"), ("Accept", ACCEPT_BOTH),
                     ("Mcp-Session-Id", session), ("Content-Length", str((96 << 20) + 1))):
            conn.putheader(k, v)
        conn.endheaders()
        # httplib reads (and discards) a declared body before answering, as clients send it.
        chunk = b" " * (1 << 20)
        for _ in range(96):
            conn.send(chunk)
        conn.send(b" ")
        resp = conn.getresponse()
        self.assertEqual(resp.status, 413)
        self.assertEqual(json.loads(resp.read())["error"]["code"], -32000)
        conn.close()

    def test_notifications_and_responses_get_202(self):
        session = self.server.initialize()
        status, _, body = self.server.request(
            "POST", {"jsonrpc": "2.0", "method": "notifications/cancelled",
                     "params": {"requestId": 12345}}, session=session)
        self.assertEqual((status, body), (202, b""))
        status, _, body = self.server.request(
            "POST", {"jsonrpc": "2.0", "id": 999, "result": {}}, session=session)
        self.assertEqual((status, body), (202, b""))

    def test_plain_requests_answer_json(self):
        session = self.server.initialize()
        messages = self.server.call(session, 1, "tools/list")
        self.assertEqual(len(messages), 1)
        names = {t["name"] for t in messages[0]["result"]["tools"]}
        self.assertIn("test_tool_with_progress", names)

    def test_progress_streams_as_sse_with_a_priming_event_first(self):
        session = self.server.initialize()
        resp, conn = self.server.open("POST", {
            "jsonrpc": "2.0", "id": 7, "method": "tools/call",
            "params": {"name": "test_tool_with_progress", "arguments": {},
                       "_meta": {"progressToken": "p7"}}}, session=session)
        self.assertEqual(resp.status, 200)
        self.assertTrue(resp.getheader("Content-Type").startswith("text/event-stream"))
        events = list(SseReader(resp).events())
        conn.close()
        self.assertIn("retry", events[0])
        self.assertIn("id", events[0])
        self.assertEqual(events[0].get("data", ""), "")
        messages = [json.loads(e["data"]) for e in events[1:]]
        for e in events[1:]:
            self.assertEqual(e.get("event"), "message")
            self.assertTrue(e.get("id"))
        progress = [m for m in messages if m.get("method") == "notifications/progress"]
        self.assertEqual([p["params"]["progress"] for p in progress], [0, 50, 100])
        self.assertTrue(all(p["params"]["progressToken"] == "p7" for p in progress))
        self.assertEqual(messages[-1]["id"], 7)
        self.assertEqual(messages[-1]["result"]["content"][0]["text"], "p7")

    def test_disconnect_mid_sse_does_not_cancel_and_last_event_id_resumes(self):
        session = self.server.initialize()
        resp, conn = self.server.open("POST", {
            "jsonrpc": "2.0", "id": 8, "method": "tools/call",
            "params": {"name": "test_tool_with_progress", "arguments": {},
                       "_meta": {"progressToken": 8}}}, session=session)
        reader = SseReader(resp)
        priming = reader.next_event()
        self.assertIn("retry", priming)
        # Hang up right after the priming event: the call must go on.
        conn.sock.shutdown(socket.SHUT_RDWR)
        conn.close()
        resp, conn = self.server.open("GET", session=session,
                                      headers={"Last-Event-ID": priming["id"]})
        self.assertEqual(resp.status, 200)
        messages = [json.loads(e["data"]) for e in SseReader(resp).events() if e.get("data")]
        conn.close()
        self.assertEqual([m["params"]["progress"] for m in messages
                          if m.get("method") == "notifications/progress"], [0, 50, 100])
        self.assertEqual(messages[-1]["id"], 8)
        self.assertEqual(messages[-1]["result"]["content"][0]["text"], "8")

    def test_logging_goes_on_the_call_stream(self):
        session = self.server.initialize()
        self.server.call(session, 1, "logging/setLevel", {"level": "debug"})
        messages = self.server.call(session, 2, "tools/call",
                                    {"name": "test_tool_with_logging", "arguments": {}})
        logs = [m for m in messages if m.get("method") == "notifications/message"]
        self.assertEqual(len(logs), 3)
        self.assertEqual(messages[-1]["id"], 2)

    def test_sampling_request_is_answered_by_its_own_post(self):
        session = self.server.initialize(capabilities={"sampling": {}})
        resp, conn = self.server.open("POST", {
            "jsonrpc": "2.0", "id": 9, "method": "tools/call",
            "params": {"name": "test_sampling", "arguments": {"prompt": "hi"}}}, session=session)
        reader = SseReader(resp)
        request = None
        while request is None:
            event = reader.next_event()
            self.assertIsNotNone(event, "stream ended before the sampling request")
            if event.get("data"):
                request = json.loads(event["data"])
        self.assertEqual(request["method"], "sampling/createMessage")
        status, _, _ = self.server.request("POST", {
            "jsonrpc": "2.0", "id": request["id"],
            "result": {"role": "assistant", "model": "m",
                       "content": {"type": "text", "text": "hello there"}}}, session=session)
        self.assertEqual(status, 202)
        messages = [json.loads(e["data"]) for e in reader.events() if e.get("data")]
        conn.close()
        self.assertEqual(messages[-1]["result"]["content"][0]["text"], "LLM response: hello there")

    def test_get_stream_replaces_and_resumes(self):
        session = self.server.initialize()
        resp, conn = self.server.open("GET", session=session)
        self.assertEqual(resp.status, 200)
        priming = SseReader(resp).next_event()
        self.assertIn("retry", priming)
        conn.close()
        resp, conn = self.server.open("GET", session=session,
                                      headers={"Last-Event-ID": priming["id"]})
        self.assertEqual(resp.status, 200)
        conn.close()

    def test_batches_only_in_2025_03_26(self):
        old = self.server.initialize(version="2025-03-26")
        status, headers, body = self.server.request("POST", [
            {"jsonrpc": "2.0", "id": 1, "method": "ping"},
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}], session=old)
        self.assertEqual(status, 200)
        answers = json.loads(body)
        self.assertEqual(sorted(a["id"] for a in answers), [1, 2])
        new = self.server.initialize()
        status, _, body = self.server.request("POST", [
            {"jsonrpc": "2.0", "id": 1, "method": "ping"}], session=new)
        self.assertEqual(status, 400)
        self.assertEqual(error_of(body)["code"], -32600)

    def test_three_concurrent_posts_with_2025_03_26_header(self):
        session = self.server.initialize()

        def post(i):
            return self.server.request("POST", {"jsonrpc": "2.0", "id": 1000 + i,
                                                "method": "tools/list"},
                                       session=session,
                                       headers={"MCP-Protocol-Version": "2025-03-26"})[0]

        with concurrent.futures.ThreadPoolExecutor(3) as pool:
            self.assertEqual(list(pool.map(post, range(3))), [200, 200, 200])

    def test_concurrent_posts_in_one_session_each_get_their_own_answer(self):
        session = self.server.initialize()

        def call(i):
            messages = self.server.call(session, i, "tools/call", {
                "name": "test_tool_with_progress", "arguments": {},
                "_meta": {"progressToken": "t%d" % i}})
            return i, messages

        with concurrent.futures.ThreadPoolExecutor(8) as pool:
            for i, messages in pool.map(call, range(8)):
                self.assertEqual(messages[-1]["id"], i)
                tokens = {m["params"]["progressToken"] for m in messages
                          if m.get("method") == "notifications/progress"}
                self.assertEqual(tokens, {"t%d" % i})

    def test_many_concurrent_sessions(self):
        def one(i):
            session = self.server.initialize()
            messages = self.server.call(session, 1, "tools/call",
                                        {"name": "test_simple_text", "arguments": {}})
            status, _, _ = self.server.request("DELETE", session=session)
            return messages[-1]["result"]["content"][0]["text"], status

        with concurrent.futures.ThreadPoolExecutor(24) as pool:
            results = list(pool.map(one, range(48)))
        self.assertEqual(len(results), 48)
        for text, status in results:
            self.assertEqual(text, "This is a simple text response for testing.")
            self.assertEqual(status, 200)

    def test_other_methods_are_405(self):
        status, headers, _ = self.server.request("PUT", b"{}")
        self.assertEqual(status, 405)
        self.assertIn("POST", headers.get("allow", ""))


class HttpAuthTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.server = HttpServer("--auth-token", "s3cret-token")

    @classmethod
    def tearDownClass(cls):
        cls.server.stop()

    def init(self, authorization):
        return self.server.request("POST", {
            "jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {"protocolVersion": LATEST, "capabilities": {},
                       "clientInfo": {"name": "x", "version": "1"}}},
            headers={"Authorization": authorization})

    def test_missing_or_wrong_token_is_401(self):
        for authorization in (None, "Bearer wrong", "Bearer s3cret-toke", "Basic s3cret-token",
                              "s3cret-token"):
            status, headers, body = self.init(authorization)
            self.assertEqual(status, 401, authorization)
            self.assertIn("bearer", headers.get("www-authenticate", "").lower())
            self.assertEqual(error_of(body)["code"], -32000)

    def test_right_token_is_accepted(self):
        status, headers, _ = self.init("Bearer s3cret-token")
        self.assertEqual(status, 200)
        self.assertIn("mcp-session-id", headers)

    def test_healthz_needs_no_token(self):
        conn = self.server.connection()
        conn.request("GET", "/healthz")
        self.assertEqual(conn.getresponse().status, 200)
        conn.close()


class HttpShutdownTest(unittest.TestCase):
    def test_sigterm_with_open_streams_exits_promptly(self):
        server = HttpServer()
        session = server.initialize()
        resp, conn = server.open("GET", session=session)
        self.assertEqual(resp.status, 200)
        SseReader(resp).next_event()
        started = time.monotonic()
        self.assertEqual(server.stop(timeout=10), 0)
        self.assertLess(time.monotonic() - started, 5.0)
        conn.close()

    def test_sigterm_right_after_start_exits(self):
        # The listener thread may not be accepting yet when "listening on" is printed; a stop
        # in that window must still end it (it used to leave Stop() joining it forever).
        for _ in range(30):
            server = HttpServer()
            self.assertEqual(server.stop(timeout=10), 0, server.stderr)


if __name__ == "__main__":
    unittest.main()
