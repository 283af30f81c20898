"""W3C trace context and log formats, through the real binary and the Gemini fake: a traceparent
in params._meta (SEP-414) or as an HTTP header is carried into the call's log lines and passed
on to Gemini as a child span (same trace id, a span id of imgmcp's own); an invalid one is
ignored; --log-format json writes one JSON object per stderr line with the call's trace_id,
method, tool, session and duration_ms."""
import json
import re
import os
import subprocess
import sys
import time
import unittest

from fake_gemini_support import FakeGeminiTestCase
from tools_support import structured

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from imgmcp_process import HttpProcess, binary_path  # noqa: E402
from replica_support import ModernClient  # noqa: E402

TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"
PARENT = f"00-{TRACE_ID}-00f067aa0ba902b7-01"
CHILD = re.compile(r"^00-" + TRACE_ID + r"-([0-9a-f]{16})-01$")


def json_lines(stderr):
    """Every stderr line parsed as JSON (a line that is not JSON fails the test)."""
    return [json.loads(line) for line in stderr.splitlines() if line.strip()]


class TraceContext(FakeGeminiTestCase):
    def generate(self, server, session, meta=None):
        return server.call_tool("generate_image", {"session_id": session, "prompt": "solid red",
                                                   "inline": "none"}, meta=meta)

    def assert_forwarded_child(self, entry):
        sent = entry["headers"].get("traceparent", "")
        match = CHILD.match(sent)
        self.assertIsNotNone(match, f"traceparent sent to Gemini: {sent!r}")
        self.assertNotEqual(match.group(1), "00f067aa0ba902b7")  # a span of imgmcp's own

    def test_meta_traceparent_reaches_gemini_and_json_log_lines(self):
        server = self.start_imgmcp(["--log-format", "json"])
        self.assertEqual(structured(self.generate(server, "t1", {"traceparent": PARENT}))
                         ["version"], 1)
        self.assert_forwarded_child(self.fake.requests()[0])
        server.wait_for_stderr('"duration_ms"')
        lines = json_lines(server.stderr)
        for line in lines:
            self.assertTrue({"time", "level", "component", "message"} <= line.keys(), line)
        done = [line for line in lines if line.get("duration_ms") is not None]
        self.assertEqual(len(done), 1, lines)
        self.assertEqual((done[0]["trace_id"], done[0]["method"], done[0]["tool"],
                          done[0]["session"]), (TRACE_ID, "tools/call", "generate_image", "t1"))
        self.assertGreater(done[0]["duration_ms"], 0)

    def test_an_invalid_traceparent_is_ignored(self):
        server = self.start_imgmcp(["--log-format", "json"])
        for bad in ["00-" + "0" * 32 + "-00f067aa0ba902b7-01", "00-ABC-def-01",
                    PARENT.upper(), PARENT + "-extra", 7]:
            with self.subTest(traceparent=bad):
                self.fake.reset()
                result = structured(self.generate(server, "t2", {"traceparent": bad}))
                self.assertGreaterEqual(result["version"], 1)
                self.assertNotIn("traceparent", self.fake.requests()[0]["headers"])
        server.wait_for_stderr("t2: ok")
        lines = json_lines(server.stderr)
        self.assertTrue([line for line in lines if line.get("session") == "t2"], lines)
        self.assertFalse([line for line in lines if "trace_id" in line], lines)

    def test_text_lines_carry_the_trace_id(self):
        server = self.start_imgmcp()
        structured(self.generate(server, "t3", {"traceparent": PARENT}))
        server.wait_for_stderr("tools/call generate_image")
        done = [line for line in server.stderr.splitlines() if "tools/call generate_image" in line]
        self.assertEqual(len(done), 1, server.stderr)
        self.assertRegex(done[0], r"^imgmcp info \[mcp\] tools/call generate_image t3: ok in "
                                  r"[0-9.]+ ms trace_id=" + TRACE_ID + "$")

    def test_http_traceparent_header_is_the_calls_trace_context(self):
        server = HttpProcess("--backend", "gemini", env=self.gemini_env())
        self.addCleanup(server.close, check=False)

        class Traced(ModernClient):
            def _headers(self, method=None, params=None):
                h = super()._headers(method, params)
                h["traceparent"] = PARENT
                return h

        answer = Traced(server.port).call_tool(
            "generate_image", {"session_id": "h1", "prompt": "solid red", "inline": "none"})
        self.assertEqual(answer["result"]["structuredContent"]["version"], 1, answer)
        self.assert_forwarded_child(self.fake.requests()[0])
        deadline = time.monotonic() + 30  # the line is written before the answer leaves
        while "trace_id=" + TRACE_ID not in server.stderr and time.monotonic() < deadline:
            time.sleep(0.01)
        self.assertIn("tools/call generate_image h1: ok in", server.stderr)
        self.assertIn("trace_id=" + TRACE_ID, server.stderr)

    def test_an_unknown_log_format_is_refused_naming_the_flag(self):
        proc = subprocess.run([binary_path(), "--log-format", "xml"], capture_output=True,
                              text=True, timeout=30, stdin=subprocess.DEVNULL)
        self.assertEqual(proc.returncode, 2, proc.stderr)
        self.assertIn("--log-format", proc.stderr)
        self.assertIn("expected text or json", proc.stderr)
        self.assertEqual(proc.stdout, "")


if __name__ == "__main__":
    unittest.main()
