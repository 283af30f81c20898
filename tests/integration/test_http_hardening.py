"""What a client or an attacker can do to the real binary over HTTP with crafted request heads and
bodies: routing headers read as raw bytes, repeated routing headers, oversized cursors, clients
that hang up, hostile bytes in logged headers, bounded echoes, the Origin's port, batches outside a
session, and the requestState key shared by replicas (docs/bad-input.md, docs/security.md).

Requests whose head must be exactly as written (percent signs, repeated lines, control bytes) go
over a raw socket; the rest use http.client. Every server is a tests/support HttpProcess, closed on
every path; every socket has a timeout.
"""
import base64
import hashlib
import concurrent.futures
import http.client
import json
import os
import signal
import socket
import sys
import threading
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "support"))
from docs_support import assert_listed, names_of_tests  # noqa: E402
from fake_gemini_process import FakeGemini  # noqa: E402  (tests/support)
from imgmcp_process import LISTENING, HttpProcess, SseReader  # noqa: E402  (tests/support)
from tools_support import under_sanitizer  # noqa: E402

TIMEOUT = 20.0
TEST_TIMEOUT = 120  # seconds; a watchdog fails a test that hangs longer
MODERN = "2026-07-28"
LEGACY = "2025-03-26"
ACCEPT_BOTH = "application/json, text/event-stream"
HEADER_MISMATCH = -32020
INVALID_PARAMS = -32602
INVALID_REQUEST = -32600


def modern_meta(progress_token=None, capabilities=None):
    meta = {"io.modelcontextprotocol/protocolVersion": MODERN,
            "io.modelcontextprotocol/clientInfo": {"name": "test_http_hardening", "version": "1"},
            "io.modelcontextprotocol/clientCapabilities": capabilities or {}}
    if progress_token is not None:
        meta["progressToken"] = progress_token
    return meta


def tool_call(name, arguments, id_=1, progress_token=None):
    return {"jsonrpc": "2.0", "id": id_, "method": "tools/call",
            "params": {"name": name, "arguments": arguments,
                       "_meta": modern_meta(progress_token)}}


def modern_headers(method, name=None, session_id=None):
    """The routing headers of a 2026-07-28 request, as (name, value) lines; with `session_id`,
    the tools/call's mirrored argument too (the tools annotate session_id x-mcp-header)."""
    lines = [("MCP-Protocol-Version", MODERN), ("Mcp-Method", method)]
    if name is not None:
        lines.append(("Mcp-Name", name))
    if session_id is not None:
        lines.append(("Mcp-Param-Session-Id", session_id))
    return lines


def read_response(sock):
    """(status, {lower-case header: value}, body) of one response on `sock` (Connection: close or
    a Content-Length or chunked body)."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        if not chunk:
            raise AssertionError(f"the connection closed before a response head: {data!r}")
        data += chunk
    head, _, rest = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    headers = {}
    for line in lines[1:]:
        key, _, value = line.partition(":")
        headers[key.strip().lower()] = value.strip()

    def more():
        chunk = sock.recv(65536)
        if not chunk:
            raise AssertionError("the connection closed inside a response body")
        return chunk

    if "content-length" in headers:
        length = int(headers["content-length"])
        while len(rest) < length:
            rest += more()
        return status, headers, rest[:length]
    if headers.get("transfer-encoding", "").lower() == "chunked":
        body = b""
        while True:
            while b"\r\n" not in rest:
                rest += more()
            size_line, _, rest = rest.partition(b"\r\n")
            size = int(size_line.split(b";")[0], 16)
            while len(rest) < size + 2:
                rest += more()
            body, rest = body + rest[:size], rest[size + 2:]
            if size == 0:
                return status, headers, body
    while True:  # until the server closes
        chunk = sock.recv(65536)
        if not chunk:
            return status, headers, rest
        rest += chunk


def raw_request(server, header_lines, body=b"", method="POST", path="/mcp", host=None):
    """Sends one request whose head is exactly `header_lines` (list of (name, value) — bytes or
    str, sent as given) after Host, Content-Type, Accept and Connection: close; returns
    read_response()."""
    if isinstance(body, (dict, list)):
        body = json.dumps(body).encode()
    head = f"{method} {path} HTTP/1.1\r\n".encode()
    host_value = host if host is not None else f"127.0.0.1:{server.port}"
    lines = [("Host", host_value), ("Connection", "close")]
    if method == "POST":
        lines += [("Content-Type", "application/json"), ("Accept", ACCEPT_BOTH),
                  ("Content-Length", str(len(body)))]
    for name, value in lines + list(header_lines):
        name = name.encode() if isinstance(name, str) else name
        value = value.encode() if isinstance(value, str) else value
        head += name + b": " + value + b"\r\n"
    with socket.create_connection(("127.0.0.1", server.port), timeout=TIMEOUT) as sock:
        sock.sendall(head + b"\r\n" + body)
        return read_response(sock)


def json_rpc(body):
    """The JSON-RPC message of a JSON body, or the last message of an SSE body."""
    text = body.decode()
    if text.lstrip().startswith(("{", "[")):
        return json.loads(text)
    messages = [json.loads(line[5:]) for line in text.splitlines() if line.startswith("data:")
                and line[5:].strip()]
    return messages[-1]


class Server(HttpProcess):
    """imgmcp --http with the local backend (or the one `args` name); each stderr line wakes
    wait_for_line()."""

    def __init__(self, *args, env=None, backend="local"):
        self.line_seen = threading.Condition()
        self.default_headers = {}  # sent with every call()
        super().__init__("--backend", backend, *args, env=env)

    def _pump(self):
        for line in iter(self.proc.stderr.readline, b""):
            with self.line_seen:
                self.stderr_lines.append(line)
                self.line_seen.notify_all()
            if self.port is None:
                m = LISTENING.search(line)
                if m:
                    self.url = m.group(1).decode()
                    self.host, self.port = m.group(2).decode(), int(m.group(3))
                    self._found.set()
        self._found.set()
        with self.line_seen:
            self.line_seen.notify_all()

    def wait_for_line(self, text, timeout):
        """Waits (woken by each new stderr line) until a line contains `text`; False on timeout."""
        deadline = time.monotonic() + timeout
        with self.line_seen:
            while not any(text.encode() in line for line in self.stderr_lines):
                left = deadline - time.monotonic()
                if left <= 0 or self.proc.poll() is not None:
                    return False
                self.line_seen.wait(left)
        return True

    def call(self, message, headers=None, progress=None):
        """A modern request through http.client; returns its JSON-RPC answer (SSE or JSON)."""
        conn = self.connection(TIMEOUT)
        try:
            params = message.get("params", {})
            h = {"Host": f"127.0.0.1:{self.port}", "Content-Type": "application/json",
                 "Accept": ACCEPT_BOTH}
            h.update(dict(modern_headers(message["method"],
                                         params.get("name") or params.get("uri"),
                                         params.get("arguments", {}).get("session_id"))))
            h.update(self.default_headers)
            h.update({k: v for k, v in (headers or {}).items() if v is not None})
            conn.request("POST", "/mcp", body=json.dumps(message).encode(), headers=h)
            resp = conn.getresponse()
            if resp.getheader("Content-Type", "").startswith("application/json"):
                return json.loads(resp.read())
            for event in SseReader(resp).events():
                if not event.get("data"):
                    continue
                m = json.loads(event["data"])
                if "id" in m and "method" not in m:
                    return m
                if progress and m.get("method") == "notifications/progress":
                    progress(m["params"])
            raise AssertionError("the stream ended without an answer")
        finally:
            conn.close()

    def versions(self, session_id):
        """The version numbers the session holds (get_image's history)."""
        answer = self.call(tool_call("get_image", {"session_id": session_id, "inline": "none",
                                                   "include_history": True}))
        result = answer["result"]
        if result.get("isError"):
            return []
        return [v["version"] for v in result["structuredContent"]["history"]]


class WatchedTest(unittest.TestCase):
    """A test that fails (rather than hangs) after TEST_TIMEOUT seconds."""

    def setUp(self):
        def on_alarm(signum, frame):
            raise TimeoutError(f"test exceeded {TEST_TIMEOUT} s")
        previous = signal.signal(signal.SIGALRM, on_alarm)
        signal.alarm(TEST_TIMEOUT)

        def disarm():
            signal.alarm(0)
            signal.signal(signal.SIGALRM, previous)
        self.addCleanup(disarm)


class ServerTestCase(WatchedTest):
    server_args = ()

    def setUp(self):
        super().setUp()
        self.server = Server(*self.server_args)
        self.addCleanup(self.server.close)

    def generate(self, session_id):
        answer = self.server.call(tool_call("generate_image", {
            "session_id": session_id, "prompt": "solid white", "inline": "none"}))
        self.assertFalse(answer["result"].get("isError"), answer)


class RoutingHeadersAreRawBytes(ServerTestCase):
    """A proxy filters on the routing headers as sent; imgmcp compares exactly those bytes."""

    def reset(self, header_lines):
        return raw_request(self.server, header_lines + [("Mcp-Param-Session-Id", "kept")],
                           tool_call("reset_session", {"session_id": "kept"}))

    def assert_refused_and_kept(self, header_lines):
        status, _, body = self.reset(header_lines)
        self.assertEqual(status, 400, body[:300])
        self.assertEqual(json.loads(body)["error"]["code"], HEADER_MISMATCH, body[:300])
        self.assertEqual(self.server.versions("kept"), [1], "the session was reset")

    def test_a_percent_encoded_mcp_name_is_not_the_name(self):
        self.generate("kept")
        self.assert_refused_and_kept(modern_headers("tools/call", "reset%5Fsession"))

    def test_a_percent_encoded_mcp_method_is_not_the_method(self):
        self.generate("kept")
        self.assert_refused_and_kept([("MCP-Protocol-Version", MODERN),
                                      ("Mcp-Method", "tools%2Fcall"),
                                      ("Mcp-Name", "reset_session")])

    def test_a_percent_encoded_protocol_version_is_not_the_version(self):
        self.generate("kept")
        status, _, body = self.reset([("MCP-Protocol-Version", "2026%2D07-28"),
                                      ("Mcp-Method", "tools/call"),
                                      ("Mcp-Name", "reset_session")])
        self.assertEqual(status, 400, body[:300])
        self.assertNotIn("result", json.loads(body))
        self.assertEqual(self.server.versions("kept"), [1])

    def test_the_exact_bytes_still_route(self):
        self.generate("kept")
        status, _, body = self.reset(modern_headers("tools/call", "reset_session"))
        self.assertEqual(status, 200, body[:300])
        self.assertEqual(self.server.versions("kept"), [])


class RepeatedRoutingHeaders(ServerTestCase):
    """Two lines of one routing header: a proxy may read the last, cpp-httplib the first."""

    def test_two_mcp_name_lines_are_refused(self):
        self.generate("kept")
        status, _, body = raw_request(
            self.server,
            modern_headers("tools/call", "reset_session", "kept") + [("Mcp-Name", "get_image")],
            tool_call("reset_session", {"session_id": "kept"}))
        self.assertEqual(status, 400, body[:300])
        error = json.loads(body)["error"]
        self.assertEqual(error["code"], HEADER_MISMATCH)
        self.assertIn("Mcp-Name", error["message"])
        self.assertEqual(self.server.versions("kept"), [1])

    def test_two_mcp_method_or_version_lines_are_refused(self):
        for extra in (("Mcp-Method", "tools/call"), ("MCP-Protocol-Version", MODERN)):
            with self.subTest(header=extra[0]):
                status, _, body = raw_request(
                    self.server, modern_headers("tools/call", "get_image", "none") + [extra],
                    tool_call("get_image", {"session_id": "none"}))
                self.assertEqual(status, 400, body[:300])
                self.assertEqual(json.loads(body)["error"]["code"], HEADER_MISMATCH)


class BearerTokenAsWritten(WatchedTest):
    TOKEN = "tok%41en-7d0c"  # "%41" is "A" once percent-decoded

    def setUp(self):
        super().setUp()
        self.server = Server("--auth-token", self.TOKEN)
        self.addCleanup(self.server.close)

    def ping(self, authorization):
        return raw_request(self.server, modern_headers("tools/list") + [
            ("Authorization", authorization)],
            {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": modern_meta()}})

    def test_a_token_with_a_percent_sign_is_compared_as_written(self):
        status, _, body = self.ping("Bearer " + self.TOKEN)
        self.assertEqual(status, 200, body[:300])
        status, _, _ = self.ping("Bearer tokAen-7d0c")
        self.assertEqual(status, 401)


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise AssertionError("no VmRSS")


class OversizedCursor(ServerTestCase):
    def test_a_cursor_of_nested_arrays_is_refused_without_growing_memory(self):
        cursor = base64.b64encode(b"resources:" + b"[" * (1 << 20)).decode()
        message = {"jsonrpc": "2.0", "id": 1, "method": "resources/list",
                   "params": {"cursor": cursor, "_meta": modern_meta()}}
        before = rss_kib(self.server.proc.pid)
        for _ in range(3):
            answer = self.server.call(message)
            self.assertEqual(answer["error"]["code"], INVALID_PARAMS)
            self.assertIn("cursor", answer["error"]["message"])
            self.assertLess(len(json.dumps(answer)), 2000)
        grown_mib = (rss_kib(self.server.proc.pid) - before) / 1024
        if not under_sanitizer():
            # Three 1.4 MB bodies are read and dropped: a few MB at most, never a tree.
            self.assertLess(grown_mib, 40, f"resident memory grew by {grown_mib:.0f} MiB")


class HangUpCancels(WatchedTest):
    """A 2026-07-28 request is cancelled by its client closing the connection — while it waits
    its turn behind other edits of its session and while its backend call runs."""

    def setUp(self):
        super().setUp()
        self.fake = FakeGemini()
        self.addCleanup(self.fake.close)
        self.server = Server("--log-level", "debug", backend="gemini",
                             env={"GEMINI_API_KEY": "AIzaTEST-hangup",
                                  "GEMINI_BASE_URL": self.fake.base_url})
        self.addCleanup(self.server.close)
        self.pool = concurrent.futures.ThreadPoolExecutor(max_workers=4)
        self.addCleanup(self.pool.shutdown, wait=False)
        self.addCleanup(self.fake.reset)  # lets a held call go on every path

    def generate(self, session_id):
        answer = self.server.call(tool_call("generate_image", {
            "session_id": session_id, "prompt": "solid white", "inline": "none"}))
        self.assertFalse(answer["result"].get("isError"), answer)

    def edit(self, session_id, prompt, id_, queued=None):
        message = tool_call("edit_image", {"session_id": session_id, "prompt": prompt,
                                           "inline": "none"}, id_=id_, progress_token=f"p{id_}")

        def on_progress(params):
            if queued is not None and "queued behind" in params.get("message", ""):
                queued.set()
        return self.server.call(message, progress=on_progress)

    def open_edit(self, session_id, prompt, id_):
        """Sends an edit with a progress token; returns (socket, reader of its SSE stream)."""
        conn = self.server.connection(TIMEOUT)
        message = tool_call("edit_image", {"session_id": session_id, "prompt": prompt,
                                           "inline": "none"}, id_=id_, progress_token=f"p{id_}")
        h = {"Host": f"127.0.0.1:{self.server.port}", "Content-Type": "application/json",
             "Accept": ACCEPT_BOTH}
        h.update(dict(modern_headers("tools/call", "edit_image", session_id)))
        conn.request("POST", "/mcp", body=json.dumps(message).encode(), headers=h)
        return conn, SseReader(conn.getresponse())

    def wait_queued(self, reader):
        for event in reader.events():
            data = json.loads(event["data"]) if event.get("data") else {}
            if "queued behind" in data.get("params", {}).get("message", ""):
                return
        raise AssertionError("the edit was answered without waiting its turn")

    def hang_up(self, conn):
        conn.sock.shutdown(socket.SHUT_RDWR)
        conn.close()

    def test_a_queued_edit_whose_client_hangs_up_is_not_committed(self):
        self.generate("line")
        self.fake.script({"hold": "first"})
        first = self.pool.submit(self.edit, "line", "invert", 11)
        self.fake.wait(held=1)
        conn, reader = self.open_edit("line", "rotate 180", 12)  # its client leaves
        self.wait_queued(reader)
        third_queued = threading.Event()
        third = self.pool.submit(self.edit, "line", "grayscale", 13, third_queued)
        self.assertTrue(third_queued.wait(TIMEOUT), "the third edit never queued")
        self.hang_up(conn)
        self.assertTrue(self.server.wait_for_line("its client closed the connection", 10),
                        "the hang-up was not noticed within 10 s (keep-alives come every 15 s)")
        self.fake.release("first")
        first_answer = first.result(TIMEOUT)
        self.assertFalse(first_answer["result"].get("isError"), first_answer)
        self.assertFalse(third.result(TIMEOUT)["result"].get("isError"))
        self.assertEqual(self.server.versions("line"), [1, 2, 3])
        sent = json.dumps(self.fake.requests())
        self.assertIn("grayscale", sent)  # the backend calls carry their prompts
        self.assertNotIn("rotate 180", sent)

    def test_a_running_edit_whose_client_hangs_up_is_not_committed(self):
        self.generate("run")
        self.fake.script({"hold": "running"})
        conn, _ = self.open_edit("run", "rotate 180", 21)  # its client leaves
        self.fake.wait(held=1)
        self.hang_up(conn)
        self.assertTrue(self.server.wait_for_line("its client closed the connection", 10),
                        "the hang-up was not noticed within 10 s (keep-alives come every 15 s)")
        self.fake.release("running")
        # The next edit of the session runs once the cancelled one is gone, and becomes v2.
        next_answer = self.edit("run", "invert", 22)
        self.assertFalse(next_answer["result"].get("isError"), next_answer)
        self.assertEqual(self.server.versions("run"), [1, 2])


class LoggedHeadersAreSafe(WatchedTest):
    def test_control_bytes_in_a_refused_host_or_origin_never_reach_the_log(self):
        server = Server()
        try:
            for host, origin in ((b"evil\x1b]0;owned\x07.example", None),
                                 (b"evil.example", b"http://x\x1b[2J\xc2\x9b31m.example"),
                                 (b"evil.example\xc2\x9b2J", None)):
                lines = [("Origin", origin)] if origin else []
                status, _, _ = raw_request(server, lines, {"jsonrpc": "2.0", "id": 1,
                                                           "method": "ping"}, host=host)
                self.assertIn(status, (400, 403))
        finally:
            server.close()
        log = b"".join(server.stderr_lines)
        for byte in (b"\x1b", b"\x07", b"\xc2\x9b"):
            self.assertNotIn(byte, log)

    def test_a_flood_of_refused_requests_writes_little_log(self):
        server = Server("--auth-token", "flood-token-21c4")
        try:
            size_before = len(b"".join(server.stderr_lines))
            big = "h" * 8000
            for i in range(250):
                host = f"{big}{i}.example" if i % 2 else f"127.0.0.1:{server.port}"
                status, _, _ = raw_request(server, [("X-Pad", big)],
                                           {"jsonrpc": "2.0", "id": 1, "method": "ping"},
                                           host=host)
                self.assertIn(status, (401, 403))
        finally:
            server.close()
        written = len(b"".join(server.stderr_lines)) - size_before
        # 250 refusals with 8 KB headers: a few rationed, clipped lines, not megabytes.
        self.assertLess(written, 16 * 1024, server.stderr[-2000:])


class BoundedEchoes(ServerTestCase):
    def test_an_mcp_name_mismatch_quotes_a_bounded_prefix(self):
        uri = "imgmcp://sessions/" + "x" * (1 << 20)
        message = {"jsonrpc": "2.0", "id": 1, "method": "resources/read",
                   "params": {"uri": uri, "_meta": modern_meta()}}
        status, _, body = raw_request(self.server, modern_headers("resources/read", "other"),
                                      message)
        self.assertEqual(status, 400)
        self.assertEqual(json.loads(body)["error"]["code"], HEADER_MISMATCH)
        self.assertLess(len(body), 2000)

    def test_resources_read_not_found_quotes_the_uri_once(self):
        uri = "imgmcp://sessions/no-such-session-" + "y" * 500
        answer = self.server.call({"jsonrpc": "2.0", "id": 1, "method": "resources/read",
                                   "params": {"uri": uri, "_meta": modern_meta()}})
        text = json.dumps(answer)
        self.assertEqual(text.count("no-such-session-"), 1, text)
        self.assertLess(len(text), 1000)


class BatchesOutsideASession(ServerTestCase):
    def test_a_stateless_batch_is_told_batches_need_a_legacy_session(self):
        batch = [{"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"_meta": modern_meta()}}]
        status, _, body = raw_request(self.server, [("MCP-Protocol-Version", MODERN)], batch)
        self.assertEqual(status, 400)
        message = json.loads(body)["error"]["message"]
        self.assertNotIn("Mcp-Session-Id header is required", message)
        self.assertIn("batch", message)

    def test_duplicate_ids_inside_a_legacy_batch_are_refused(self):
        status, headers, body = raw_request(self.server, [], {
            "jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {"protocolVersion": LEGACY, "capabilities": {},
                       "clientInfo": {"name": "t", "version": "1"}}})
        self.assertEqual(status, 200, body)
        session = headers["mcp-session-id"]
        session_line = [("Mcp-Session-Id", session), ("MCP-Protocol-Version", LEGACY)]
        status, _, _ = raw_request(self.server, session_line,
                                   {"jsonrpc": "2.0", "method": "notifications/initialized"})
        self.assertEqual(status, 202)
        status, _, body = raw_request(self.server, session_line, [
            {"jsonrpc": "2.0", "id": 7, "method": "ping"},
            {"jsonrpc": "2.0", "id": 7, "method": "ping"}])
        self.assertEqual(status, 409, body)
        error = json.loads(body)["error"]
        self.assertEqual(error["code"], INVALID_REQUEST)
        self.assertIn("duplicate request id 7", error["message"])


class GalleryPolicy(ServerTestCase):
    def test_the_gallery_csp_allows_its_own_script_by_hash_only(self):
        conn = self.server.connection(TIMEOUT)
        try:
            conn.request("GET", "/gallery", headers={"Host": f"127.0.0.1:{self.server.port}"})
            resp = conn.getresponse()
            page = resp.read()
            csp = resp.getheader("Content-Security-Policy")
        finally:
            conn.close()
        self.assertEqual(resp.status, 200)
        script_src = next(d for d in csp.split(";") if d.strip().startswith("script-src"))
        self.assertNotIn("'unsafe-inline'", script_src)
        start = page.index(b"<script>") + len(b"<script>")
        script = page[start:page.index(b"</script>", start)]
        digest = base64.b64encode(hashlib.sha256(script).digest()).decode()
        self.assertIn(f"'sha256-{digest}'", script_src)


class GallerySummary(ServerTestCase):
    def test_the_listing_summarises_each_session_for_its_gallery_card(self):
        self.generate("summarised")
        answer = self.server.call(tool_call("edit_image", {
            "session_id": "summarised", "prompt": "invert", "inline": "none"}))
        self.assertFalse(answer["result"].get("isError"), answer)
        listing = self.server.call({"jsonrpc": "2.0", "id": 1, "method": "resources/list",
                                    "params": {"_meta": modern_meta()}})
        manifest = next(r for r in listing["result"]["resources"]
                        if r["uri"] == "imgmcp://sessions/summarised")
        summary = manifest["_meta"]["imgmcp/summary"]
        self.assertEqual(summary["versions"], 2)
        self.assertEqual(summary["operation"], "edit")
        self.assertEqual(summary["prompt"], "invert")
        self.assertTrue(summary["created_at"].endswith("Z"))


class RequestStateAcrossReplicas(WatchedTest):
    """A multi-round (input_required) call may send its retry to another replica."""

    TOOL = "test_input_required_result_request_state"

    def first_round(self, server):
        params = {"name": self.TOOL, "arguments": {},
                  "_meta": modern_meta(capabilities={"elicitation": {}})}
        answer = server.call({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                              "params": params})
        self.assertEqual(answer["result"]["resultType"], "input_required", answer)
        return answer["result"]["requestState"]

    def retry(self, server, state):
        params = {"name": self.TOOL, "arguments": {}, "requestState": state,
                  "inputResponses": {"confirm": {"action": "accept", "content": {"ok": True}}},
                  "_meta": modern_meta(capabilities={"elicitation": {}})}
        return server.call({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": params},
                           headers={"Authorization": self.authorization})

    def replicas(self, *args, env=None):
        servers = []
        for _ in range(2):
            servers.append(Server("--conformance-fixtures", *args, env=env))
            self.addCleanup(servers[-1].close)
        return servers

    def check(self, first, second):
        state = self.first_round(first)
        answer = self.retry(second, state)
        self.assertIn("result", answer, answer)
        self.assertEqual(answer["result"]["content"][0]["text"], "state-ok: confirmed=true")

    def test_replicas_with_one_bearer_token_accept_each_others_state(self):
        token = "replica-token-93ab"
        self.authorization = "Bearer " + token
        first, second = self.replicas("--auth-token", token)
        first.default_headers = second.default_headers = {"Authorization": self.authorization}
        self.check(first, second)

    def test_replicas_with_one_request_state_key_accept_each_others_state(self):
        self.authorization = None
        first, second = self.replicas(env={"IMGMCP_REQUEST_STATE_KEY": "shared-key-5f1d"})
        self.check(first, second)

    def test_a_replica_with_another_key_refuses_the_state(self):
        self.authorization = None
        first = Server("--conformance-fixtures", env={"IMGMCP_REQUEST_STATE_KEY": "one-key"})
        self.addCleanup(first.close)
        other = Server("--conformance-fixtures", env={"IMGMCP_REQUEST_STATE_KEY": "another"})
        self.addCleanup(other.close)
        answer = self.retry(other, self.first_round(first))
        self.assertEqual(answer["error"]["code"], INVALID_PARAMS, answer)


class CatalogueDocs(unittest.TestCase):
    def test_the_docs_list_every_test_here(self):
        assert_listed(self, names_of_tests(
            RoutingHeadersAreRawBytes, RepeatedRoutingHeaders, BearerTokenAsWritten,
            OversizedCursor, HangUpCancels, LoggedHeadersAreSafe, BoundedEchoes,
            BatchesOutsideASession, GalleryPolicy, GallerySummary, RequestStateAcrossReplicas))


if __name__ == "__main__":
    unittest.main()
