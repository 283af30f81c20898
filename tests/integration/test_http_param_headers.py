"""SEP-2243 custom headers on the real binary over HTTP: the four tools annotate session_id with
`x-mcp-header: "Session-Id"` (in both eras' tools/list), and a tools/call's
Mcp-Param-Session-Id header is checked against the body's session_id (2026-07-28
transports/streamable-http, "Custom Headers from Tool Parameters"; docs/bad-input.md).

- 2026-07-28 requests: the header must come whenever the body has a session_id, as one line,
  plain (visible ASCII) or "=?base64?…?=" (canonical, padded Base64), and equal to the body's
  value; a header without a session_id in the body is refused too. Each refusal is HTTP 400 with
  the JSON-RPC error -32020 (HeaderMismatch) naming the header, and commits nothing.
- Legacy sessions (2025-11-25): clients that predate SEP-2243 send no header and keep working;
  a header a legacy client does send must agree with the body the same way.

Requests are sent with http.client's putheader, so a test can send a header twice or with bytes
outside ASCII. Every server is a tests/support HttpProcess with the local backend, closed on
every path.
"""
import base64
import http.client
import json
import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "support"))
from imgmcp_process import HttpProcess, SseReader  # noqa: E402  (tests/support)

TIMEOUT = 30.0
MODERN = "2026-07-28"
LEGACY = "2025-11-25"
HEADER_MISMATCH = -32020
HEADER = "Mcp-Param-Session-Id"
SESSION_TOOLS = ["edit_image", "generate_image", "get_image", "reset_session"]


def b64(text):
    return "=?base64?" + base64.b64encode(text.encode()).decode() + "?="


class Answer:
    """An HTTP answer: its status and its JSON-RPC message (the last one of an SSE body)."""

    def __init__(self, status, headers, body):
        self.status, self.headers = status, headers
        text = body.decode("utf-8", "replace")
        if headers.get("content-type", "").startswith("text/event-stream"):
            data = [line[5:] for line in text.splitlines() if line.startswith("data:")]
            self.message = json.loads([d for d in data if d.strip()][-1])
        else:
            self.message = json.loads(text) if text.strip() else {}

    def error_code(self):
        return self.message.get("error", {}).get("code")

    def structured(self):
        result = self.message.get("result", {})
        assert not result.get("isError") and "structuredContent" in result, self.message
        return result["structuredContent"]


class ParamHeaderTestCase(unittest.TestCase):
    def setUp(self):
        self.server = HttpProcess("--backend", "local")
        self.addCleanup(self.server.close)
        self.ids = iter(range(1, 10_000))
        self.legacy_session = None

    def post(self, message, header_lines):
        """POSTs `message` with the basic headers and then `header_lines` ((name, value) pairs,
        str or bytes, sent as given, repeats included)."""
        conn = self.server.connection(TIMEOUT)
        try:
            body = json.dumps(message).encode()
            conn.putrequest("POST", "/mcp", skip_host=True, skip_accept_encoding=True)
            lines = [("Host", f"127.0.0.1:{self.server.port}"),
                     ("Content-Type", "application/json"),
                     ("Accept", "application/json, text/event-stream"),
                     ("Content-Length", str(len(body)))] + list(header_lines)
            for name, value in lines:
                conn.putheader(name, value)
            conn.endheaders(body)
            resp = conn.getresponse()
            headers = {k.lower(): v for k, v in resp.getheaders()}
            if headers.get("content-type", "").startswith("text/event-stream"):
                events = []
                for event in SseReader(resp).events():
                    events.append(f"data:{event.get('data', '')}")
                return Answer(resp.status, headers, "\n".join(events).encode())
            return Answer(resp.status, headers, resp.read())
        finally:
            conn.close()

    # --- 2026-07-28 requests ---
    def modern(self, method, params, header_lines=()):
        params = dict(params)
        params["_meta"] = {"io.modelcontextprotocol/protocolVersion": MODERN,
                           "io.modelcontextprotocol/clientInfo": {"name": "test", "version": "1"},
                           "io.modelcontextprotocol/clientCapabilities": {}}
        lines = [("MCP-Protocol-Version", MODERN), ("Mcp-Method", method)]
        if "name" in params:
            lines.append(("Mcp-Name", params["name"]))
        return self.post({"jsonrpc": "2.0", "id": next(self.ids), "method": method,
                          "params": params}, lines + list(header_lines))

    def call(self, tool, arguments, header_lines=()):
        return self.modern("tools/call", {"name": tool, "arguments": arguments}, header_lines)

    def version_of(self, session_id):
        """The session's current version (0 when it has none, or does not exist)."""
        answer = self.call("get_image", {"session_id": session_id, "inline": "none",
                                         "include_history": False},
                           [(HEADER, session_id)])
        result = answer.message["result"]
        return 0 if result.get("isError") else result["structuredContent"]["version"]

    def assert_refused(self, answer, *fragments):
        self.assertEqual(answer.status, 400, answer.message)
        self.assertEqual(answer.error_code(), HEADER_MISMATCH, answer.message)
        message = answer.message["error"]["message"]
        self.assertIn(HEADER, message)
        for fragment in fragments:
            self.assertIn(fragment, message)
        self.assertNotIn("result", answer.message)

    # --- legacy sessions ---
    def legacy(self, method, params, header_lines=()):
        if self.legacy_session is None:
            init = self.post({"jsonrpc": "2.0", "id": 0, "method": "initialize",
                              "params": {"protocolVersion": LEGACY, "capabilities": {},
                                         "clientInfo": {"name": "test", "version": "1"}}}, [])
            self.assertEqual(init.status, 200, init.message)
            self.legacy_session = init.headers["mcp-session-id"]
            note = self.post({"jsonrpc": "2.0", "method": "notifications/initialized"},
                             [("Mcp-Session-Id", self.legacy_session),
                              ("MCP-Protocol-Version", LEGACY)])
            self.assertEqual(note.status, 202)
        return self.post({"jsonrpc": "2.0", "id": next(self.ids), "method": method,
                          "params": params},
                         [("Mcp-Session-Id", self.legacy_session),
                          ("MCP-Protocol-Version", LEGACY)] + list(header_lines))

    def legacy_call(self, tool, arguments, header_lines=()):
        return self.legacy("tools/call", {"name": tool, "arguments": arguments}, header_lines)


class ToolsListShowsTheAnnotation(ParamHeaderTestCase):
    def assert_annotated(self, answer):
        self.assertEqual(answer.status, 200, answer.message)
        tools = {t["name"]: t for t in answer.message["result"]["tools"]}
        self.assertEqual(sorted(tools), SESSION_TOOLS)
        for name, tool in tools.items():
            properties = tool["inputSchema"]["properties"]
            self.assertEqual(properties["session_id"].get("x-mcp-header"), "Session-Id", name)
            self.assertEqual(properties["session_id"]["type"], "string", name)
            annotated = [p for p, s in properties.items() if "x-mcp-header" in s]
            self.assertEqual(annotated, ["session_id"], name)

    def test_modern_and_legacy_tools_list(self):
        self.assert_annotated(self.modern("tools/list", {}))
        self.assert_annotated(self.legacy("tools/list", {}))


class ModernRequestsMirrorSessionId(ParamHeaderTestCase):
    def setUp(self):
        super().setUp()
        made = self.call("generate_image", {"session_id": "s1", "prompt": "solid white",
                                            "inline": "none"}, [(HEADER, "s1")])
        self.assertEqual(made.structured()["version"], 1)

    def edit(self, header_lines, session_id="s1"):
        return self.call("edit_image", {"session_id": session_id, "prompt": "invert",
                                        "inline": "none"}, header_lines)

    def test_a_matching_header_plain_or_base64_is_accepted(self):
        self.assertEqual(self.edit([(HEADER, "s1")]).structured()["version"], 2)
        self.assertEqual(self.edit([(HEADER, b64("s1"))]).structured()["version"], 3)
        # Header names are case-insensitive; whitespace around a value is not part of it.
        self.assertEqual(self.edit([("mcp-param-session-id", "  s1\t")]).structured()["version"], 4)

    def test_a_missing_header_is_refused_and_commits_nothing(self):
        self.assert_refused(self.edit([]), "is required", "arguments.session_id", "'s1'")
        self.assertEqual(self.version_of("s1"), 1)

    def test_a_mismatched_header_is_refused_and_commits_nothing(self):
        self.assert_refused(self.edit([(HEADER, "s2")]), "'s2' does not match body value 's1'")
        self.assert_refused(self.edit([(HEADER, "S1")]), "does not match")  # values: exact case
        self.assert_refused(self.edit([(HEADER, b64("s2"))]), "'s2' does not match")
        self.assertEqual(self.version_of("s1"), 1)
        self.assertEqual(self.version_of("s2"), 0)

    def test_malformed_values_are_refused(self):
        for value in ("=?base64?czE?=",          # unpadded
                      "=?base64?czE=?==",        # not the sentinel's end: a plain value ≠ s1
                      "=?base64?cz!=?=",         # outside the alphabet
                      "=?base64?c-E=?=",         # the URL-safe alphabet is not Base64 here
                      b"s\xc3\xa91"):            # bytes outside ASCII in a plain value
            with self.subTest(value=value):
                answer = self.edit([(HEADER, value)])
                self.assert_refused(answer)
        self.assertEqual(self.version_of("s1"), 1)

    def test_two_header_lines_are_refused(self):
        self.assert_refused(self.edit([(HEADER, "s1"), (HEADER, "s1")]), "more than one")
        self.assertEqual(self.version_of("s1"), 1)

    def test_a_header_without_a_session_id_in_the_body_is_refused(self):
        # generate_image without session_id mints a session: the header would route it to the
        # replica of a session it never touches.
        answer = self.call("generate_image", {"prompt": "solid red", "inline": "none"},
                           [(HEADER, "s1")])
        self.assert_refused(answer, "the body has no arguments.session_id")
        answer = self.call("generate_image", {"session_id": None, "prompt": "solid red"},
                           [(HEADER, "s1")])
        self.assert_refused(answer)
        listed = self.modern("resources/list", {})
        self.assertEqual(len([r for r in listed.message["result"]["resources"]
                              if r["uri"].startswith("imgmcp://sessions/")
                              and "/versions/" in r["uri"]]), 1, "a session was minted")

    def test_a_call_without_session_id_needs_no_header(self):
        made = self.call("generate_image", {"prompt": "solid red", "inline": "none"})
        self.assertEqual(made.structured()["version"], 1)

    def test_an_invalid_session_id_mirrored_as_sent_reaches_the_tool(self):
        # The header agrees with the body: the tool itself refuses the id, naming the field.
        answer = self.call("get_image", {"session_id": " bad id"}, [(HEADER, b64(" bad id"))])
        self.assertEqual(answer.status, 200, answer.message)
        self.assertTrue(answer.message["result"]["isError"])
        self.assertIn("session_id", answer.message["result"]["content"][0]["text"])

    def test_other_methods_ignore_the_header(self):
        self.assertEqual(self.modern("tools/list", {}, [(HEADER, "anything")]).status, 200)


class LegacySessionsMayOmitTheHeader(ParamHeaderTestCase):
    def test_no_header_works_and_a_sent_one_must_agree(self):
        made = self.legacy_call("generate_image", {"session_id": "l1", "prompt": "solid white",
                                                   "inline": "none"})
        self.assertEqual(made.structured()["version"], 1)
        self.assertEqual(self.legacy_call("edit_image", {"session_id": "l1", "prompt": "invert",
                                                         "inline": "none"},
                                          [(HEADER, "l1")]).structured()["version"], 2)
        self.assert_refused(
            self.legacy_call("edit_image", {"session_id": "l1", "prompt": "invert"},
                             [(HEADER, "other")]), "does not match")
        self.assert_refused(
            self.legacy_call("edit_image", {"session_id": "l1", "prompt": "invert"},
                             [(HEADER, "=?base64?bDE?=")]), "invalid value")
        self.assert_refused(
            self.legacy_call("generate_image", {"prompt": "solid red"}, [(HEADER, "l1")]),
            "the body has no arguments.session_id")
        self.assertEqual(self.version_of("l1"), 2)


if __name__ == "__main__":
    unittest.main()
