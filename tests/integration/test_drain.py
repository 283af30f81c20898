"""Readiness and the graceful drain of one HTTP replica on SQLite (README.md, "Draining and rolling
restarts"): /readyz, SIGTERM with a call in flight (it finishes and commits; new calls are refused
with 503 once the notice window is over; exit 0), a call still running at --drain-timeout
(cancelled and answered with an error saying nothing was committed, the session's turn free for
the next server on the same data dir), a notice window that clients polling all the time cannot
keep open, a second signal, the SSE retry hint, and --drain-timeout's validation; tasks in flight
are calls in flight (both task wires: the drain waits for them, and one still running at the
timeout ends failed saying the server stopped); over stdio, SIGTERM stops reading and lets the
call or task in flight finish (or cancels it at --drain-timeout), also when SIGINT and the end of
input come together. Calls are held at a gate of the Gemini fake
(tests/support/fake_gemini_process.py) for as long as a test needs them in flight.
"""
import http.client
import os
import re
import signal
import subprocess
import tempfile
import threading
import time
import shutil
import unittest

from fake_gemini_support import TEST_KEY, FakeGemini
from replica_support import CallFailed, LegacyClient, ModernClient, structured
from test_tasks import TasksClient
from test_tasks_legacy import HttpSession, TASKS_CAPABILITY, start_task
from imgmcp_process import HttpProcess, SseReader, binary_path, clean_env
from mcp_harness import ServerProcess
from tools_support import wait_until

WAIT = 20.0  # seconds any awaited condition may take


def get(port, path):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=WAIT)
    try:
        conn.request("GET", path)
        resp = conn.getresponse()
        return resp.status, resp.read().decode()
    finally:
        conn.close()


class DrainTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.fake = FakeGemini()
        cls.addClassCleanup(cls.fake.close)

    def setUp(self):
        self.fake.reset()  # lets go of any call a test left held
        self.data_dir = tempfile.mkdtemp(prefix="imgmcp-drain-")
        self.addCleanup(shutil.rmtree, self.data_dir, True)
        signal.signal(signal.SIGALRM, self._timeout)
        signal.alarm(60)
        self.addCleanup(signal.alarm, 0)

    def _timeout(self, *_):
        raise TimeoutError("test exceeded 60 s")

    def start(self, *args, env=None, backend="gemini"):
        env = {"GEMINI_API_KEY": TEST_KEY, "GEMINI_BASE_URL": self.fake.base_url, **(env or {})}
        server = HttpProcess("--backend", backend, *args, env=env, data_dir=self.data_dir,
                             name="imgmcp")
        self.addCleanup(server.close, 20.0, False)
        return server

    def log_has(self, server, text):
        return wait_until(lambda: text in server.stderr, what=f"log line {text!r}")

    def start_held_edit(self, client, session_id, gate):
        """edit_image of `session_id`, held at the fake's `gate`; returns (thread, outcome)."""
        self.fake.script({"hold": gate})
        outcome = {}

        def edit():
            try:
                outcome["response"] = client.call_tool("edit_image", {
                    "session_id": session_id, "prompt": "draw square black at 20,20 size 6",
                    "inline": "none"})
            except CallFailed as e:
                outcome["failed"] = str(e)
        thread = threading.Thread(target=edit, daemon=True)
        thread.start()
        self.assertEqual(self.fake.wait(held=1, timeout=WAIT)["held"], 1)
        return thread, outcome

    def versions_on_next_server(self, session_id):
        """The session's versions as a fresh server on the same data dir sees them, after an edit
        it makes at once (the local backend): the turn must be free."""
        with HttpProcess("--backend", "local", data_dir=self.data_dir, name="next") as after:
            client = ModernClient(after.port)
            started = time.monotonic()
            edited = structured(client.call_tool("edit_image", {
                "session_id": session_id, "prompt": "draw square black at 60,20 size 6",
                "inline": "none"}))
            self.assertLess(time.monotonic() - started, 5.0, "the next edit waited for a turn")
            history = structured(client.call_tool("get_image", {
                "session_id": session_id, "inline": "none"}))["history"]
            self.assertEqual(after.close(), 0)
        return edited["version"], [h["version"] for h in history]

    def test_readyz_waits_for_the_store_and_needs_no_token(self):
        gate = os.path.join(self.data_dir, "open-gate")
        os.mkfifo(gate)
        server = self.start("--auth-token", "s3cret-token-for-readyz",
                            env={"IMGMCP_TEST_STORE_OPEN_GATE": gate})
        status, body = get(server.port, "/readyz")
        self.assertEqual((status, body), (503, "not ready: the store is opening"))
        with open(gate, "w"):
            pass  # the store's open may finish now
        wait_until(lambda: get(server.port, "/readyz") == (200, "ready"), what="/readyz 200")
        self.assertEqual(get(server.port, "/healthz"), (200, "ok"))

    def test_sigterm_lets_the_call_in_flight_finish_and_commit(self):
        server = self.start("--drain-timeout", "30")
        client = ModernClient(server.port)
        structured(client.call_tool("generate_image", {"session_id": "kept", "prompt": "white",
                                                       "inline": "none"}))
        # A balancer watches /readyz.
        wait_until(lambda: get(server.port, "/readyz") == (200, "ready"), what="/readyz 200")
        thread, outcome = self.start_held_edit(client, "kept", "in flight")
        server.proc.send_signal(signal.SIGTERM)
        wait_until(lambda: get(server.port, "/readyz")[0] == 503, what="/readyz 503")
        self.assertEqual(get(server.port, "/readyz"), (503, "not ready: draining"))
        # The notice window: calls are still served while the balancer has not noticed.
        got = structured(client.call_tool("get_image", {"session_id": "kept", "inline": "none",
                                                        "include_history": False}))
        self.assertEqual(got["version"], 1)
        # Then new calls are refused before they run (a proxy retries them elsewhere).
        self.log_has(server, "refusing new calls")
        conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=WAIT)
        conn.request("POST", "/mcp", body=b'{"jsonrpc":"2.0","id":7,"method":"ping"}',
                     headers=client._headers("ping"))
        refused = conn.getresponse()
        self.assertEqual(refused.status, 503)
        self.assertEqual(refused.getheader("Retry-After"), "1")
        self.assertIn(b"stopping", refused.read())
        conn.close()
        self.assertIsNone(server.proc.poll(), "exited with a call in flight")
        self.fake.release("in flight")
        thread.join(WAIT)
        self.assertEqual(structured(outcome["response"])["version"], 2, outcome)
        self.assertEqual(server.proc.wait(WAIT), 0, server.stderr)
        self.assertIn("nothing in flight", server.stderr)
        self.assertEqual(self.versions_on_next_server("kept"), (3, [1, 2, 3]))

    def test_a_call_running_past_the_drain_timeout_is_cancelled(self):
        server = self.start("--drain-timeout", "1")
        client = ModernClient(server.port)
        structured(client.call_tool("generate_image", {"session_id": "cut", "prompt": "white",
                                                       "inline": "none"}))
        thread, outcome = self.start_held_edit(client, "cut", "never released")
        started = time.monotonic()
        server.proc.send_signal(signal.SIGTERM)
        self.assertEqual(server.proc.wait(WAIT), 0, server.stderr)
        self.assertLess(time.monotonic() - started, 8.0)
        self.assertIn("cancelling 1 request(s) and 0 task(s) still in flight", server.stderr)
        thread.join(WAIT)
        # Answered, on the stream it was waiting on: an error saying nothing was committed.
        self.assertIn("response", outcome, outcome)
        error = outcome["response"].get("error")
        self.assertIsNotNone(error, outcome)
        self.assertEqual(error["code"], -32603)
        self.assertIn("shutting down", error["message"])
        self.assertIn("nothing was committed", error["message"])
        # Nothing of it was committed, and its turn is free: the next edit is version 2.
        self.assertEqual(self.versions_on_next_server("cut"), (2, [1, 2]))

    def test_the_notice_window_ends_however_often_clients_ask(self):
        # Clients that keep sending requests more often than every 2 s cannot keep the notice
        # window open until the drain timeout: it ends after 10 s (or half the timeout).
        server = self.start("--drain-timeout", "12")
        client = ModernClient(server.port)
        wait_until(lambda: get(server.port, "/readyz") == (200, "ready"), what="/readyz 200")
        structured(client.call_tool("generate_image", {"session_id": "busy", "prompt": "white",
                                                       "inline": "none"}))
        thread, outcome = self.start_held_edit(client, "busy", "busy")
        server.proc.send_signal(signal.SIGTERM)
        started = time.monotonic()
        while "refusing new calls" not in server.stderr:  # asking all the time, as a poller does
            self.assertLess(time.monotonic() - started, 11.0, server.stderr)
            try:
                client.call("ping")
            except CallFailed:
                pass
            time.sleep(0.2)
        self.assertLess(time.monotonic() - started, 7.5)  # half of 12 s, not the whole timeout
        self.assertIn("the notice window ends", server.stderr)
        self.fake.release("busy")
        thread.join(WAIT)
        self.assertEqual(structured(outcome["response"])["version"], 2, outcome)
        self.assertEqual(server.proc.wait(WAIT), 0, server.stderr)

    def held_tasks(self, server, gate):
        """A modern task and a legacy one (2025-11-25 utility), each an edit of its own session
        held at the fake's `gate`. Returns [(wire, session, task id)]."""
        modern = TasksClient(server.port)
        legacy = HttpSession(server.port)
        plain = ModernClient(server.port)
        for session in ("tm", "tl"):
            structured(plain.call_tool("generate_image", {"session_id": session,
                                                          "prompt": "white", "inline": "none"}))
        self.fake.script({"hold": gate}, {"hold": gate})
        edit = {"prompt": "draw square black at 20,20 size 6", "inline": "none"}
        m = modern.start("edit_image", dict(edit, session_id="tm"))["taskId"]
        l_ = start_task(legacy, "edit_image", dict(edit, session_id="tl"))["taskId"]
        self.assertEqual(self.fake.wait(held=2, timeout=WAIT)["held"], 2)
        return [("modern", "tm", m), ("legacy", "tl", l_)]

    def tasks_on_next_server(self, tasks):
        """Each task as a fresh server on the same data dir reads it (the wire it was made on)."""
        seen = {}
        with HttpProcess("--backend", "local", data_dir=self.data_dir, name="next") as after:
            modern = TasksClient(after.port)
            legacy = HttpSession(after.port)
            for wire, session, task_id in tasks:
                client = modern if wire == "modern" else legacy
                seen[wire] = client.call("tasks/get", {"taskId": task_id})["result"]
            self.assertEqual(after.close(), 0)
        return seen

    def test_sigterm_waits_for_tasks_in_flight(self):
        server = self.start("--drain-timeout", "30")
        tasks = self.held_tasks(server, "tasks in flight")
        server.proc.send_signal(signal.SIGTERM)
        self.log_has(server, "refusing new calls; 0 request(s) and 2 task(s) in flight may finish")
        self.assertIsNone(server.proc.poll(), "exited with tasks in flight")
        self.fake.release("tasks in flight")
        self.assertEqual(server.proc.wait(WAIT), 0, server.stderr)
        self.assertIn("nothing in flight", server.stderr)
        seen = self.tasks_on_next_server(tasks)
        self.assertEqual(seen["modern"]["status"], "completed", seen)
        self.assertEqual(seen["modern"]["result"]["structuredContent"]["version"], 2)
        self.assertEqual(seen["legacy"]["status"], "completed", seen)

    def test_a_task_past_the_drain_timeout_fails_saying_the_server_stopped(self):
        server = self.start("--drain-timeout", "1")
        tasks = self.held_tasks(server, "tasks never released")
        started = time.monotonic()
        server.proc.send_signal(signal.SIGTERM)
        self.assertEqual(server.proc.wait(WAIT), 0, server.stderr)
        self.assertGreater(time.monotonic() - started, 0.9)  # it waited for them
        self.assertIn("cancelling 0 request(s) and 2 task(s) still in flight", server.stderr)
        seen = self.tasks_on_next_server(tasks)
        for wire in ("modern", "legacy"):
            task = seen[wire]
            self.assertEqual(task["status"], "failed", task)
            self.assertIn("stopped (SIGTERM or SIGINT) before this task finished",
                          task["statusMessage"])
            self.assertIn("nothing was committed", task["statusMessage"])
        self.assertEqual(seen["modern"]["error"]["code"], -32603)
        self.assertNotIn("cancel", seen["modern"]["error"]["message"].replace("cancelled", ""))
        for session in ("tm", "tl"):  # nothing committed, and the turn is free
            self.assertEqual(self.versions_on_next_server(session), (2, [1, 2]))

    def test_a_second_signal_stops_at_once(self):
        server = self.start("--drain-timeout", "600")
        client = ModernClient(server.port)
        structured(client.call_tool("generate_image", {"session_id": "twice", "prompt": "white",
                                                       "inline": "none"}))
        self.start_held_edit(client, "twice", "held on")
        server.proc.send_signal(signal.SIGINT)
        self.log_has(server, "SIGINT: draining")
        started = time.monotonic()
        server.proc.send_signal(signal.SIGTERM)
        self.assertEqual(server.proc.wait(WAIT), 0, server.stderr)
        self.assertLess(time.monotonic() - started, 5.0)
        self.assertIn("SIGTERM again: stopping now", server.stderr)
        self.assertEqual(self.versions_on_next_server("twice"), (2, [1, 2]))

    def test_streams_end_with_a_retry_hint(self):
        server = self.start(backend="local")
        client = LegacyClient(server.port)
        conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=WAIT)
        headers = client._headers()
        headers["Accept"] = "text/event-stream"
        conn.request("GET", "/mcp", headers=headers)
        resp = conn.getresponse()
        self.assertEqual(resp.status, 200)
        reader = SseReader(resp)
        self.assertIn("id", reader.next_event())  # the priming event (it has a retry: too)
        server.proc.send_signal(signal.SIGTERM)
        rest = list(reader.events())
        conn.close()
        self.assertEqual(rest, [{"retry": "1000"}])
        self.assertEqual(server.proc.wait(WAIT), 0, server.stderr)

    def start_stdio(self, *args):
        server = ServerProcess(["--backend", "gemini", *args], data_dir=self.data_dir, env={
            "GEMINI_API_KEY": TEST_KEY, "GEMINI_BASE_URL": self.fake.base_url})
        self.addCleanup(server.__exit__, None, None, None)
        server.initialize()
        result = server.call_tool("generate_image", {"session_id": "piped", "prompt": "white",
                                                     "inline": "none"})["result"]
        self.assertEqual(result["structuredContent"]["version"], 1, result)
        self.fake.script({"hold": "stdio"})
        server.send({"jsonrpc": "2.0", "id": 900, "method": "tools/call", "params": {
            "name": "edit_image", "arguments": {"session_id": "piped", "inline": "none",
                                                "prompt": "draw square black at 20,20 size 6"}}})
        self.assertEqual(self.fake.wait(held=1, timeout=WAIT)["held"], 1)
        return server

    def test_stdio_sigterm_lets_the_call_in_flight_finish(self):
        server = self.start_stdio("--drain-timeout", "30")
        server.proc.send_signal(signal.SIGTERM)
        self.assertIn("SIGTERM: no more input is read",
                      server.wait_for_stderr("SIGTERM: no more input is read"))
        self.assertIsNone(server.proc.poll(), "exited with a call in flight")
        self.fake.release("stdio")
        answer = server.wait_for(lambda m: m.get("id") == 900, WAIT)
        self.assertEqual(answer["result"]["structuredContent"]["version"], 2, answer)
        self.assertEqual(server.wait_exit(WAIT), 0, server.stderr)
        self.assertEqual(self.versions_on_next_server("piped"), (3, [1, 2, 3]))

    def test_stdio_sigint_and_the_end_of_input_together_keep_the_drain_timeout(self):
        # An interactive client's Ctrl-C: its pipe closes and SIGINT comes at once. The call in
        # flight keeps the drain timeout (30 s), not the 1.2 s a bare end of input gives.
        server = self.start_stdio("--drain-timeout", "30")
        server.proc.stdin.close()
        server.proc.send_signal(signal.SIGINT)
        server.wait_for_stderr("SIGINT: no more input is read")
        time.sleep(2.0)  # the point: longer than the end-of-input grace
        self.assertEqual(self.fake.wait(held=1, timeout=WAIT)["held"], 1, server.stderr)
        self.assertNotIn("cancelling", server.stderr)
        self.fake.release("stdio")
        answer = server.wait_for(lambda m: m.get("id") == 900, WAIT)
        self.assertEqual(answer["result"]["structuredContent"]["version"], 2, answer)
        self.assertEqual(server.wait_exit(WAIT), 0, server.stderr)

    def test_stdio_sigterm_waits_for_a_task_in_flight(self):
        server = ServerProcess(["--backend", "gemini", "--drain-timeout", "30"],
                               data_dir=self.data_dir, env={
                                   "GEMINI_API_KEY": TEST_KEY,
                                   "GEMINI_BASE_URL": self.fake.base_url})
        self.addCleanup(server.__exit__, None, None, None)
        server.initialize(version="2025-11-25", capabilities={"tasks": TASKS_CAPABILITY})
        result = server.call_tool("generate_image", {"session_id": "st", "prompt": "white",
                                                     "inline": "none"})["result"]
        self.assertEqual(result["structuredContent"]["version"], 1, result)
        self.fake.script({"hold": "stdio task"})
        created = server.request("tools/call", {
            "name": "edit_image", "task": {},
            "arguments": {"session_id": "st", "inline": "none",
                          "prompt": "draw square black at 20,20 size 6"}}, timeout=WAIT)
        task_id = created["result"]["task"]["taskId"]
        self.assertEqual(self.fake.wait(held=1, timeout=WAIT)["held"], 1)
        server.proc.send_signal(signal.SIGTERM)
        server.wait_for_stderr("SIGTERM: no more input is read")
        self.assertIsNone(server.proc.poll(), "exited with a task in flight")
        self.fake.release("stdio task")
        self.assertEqual(server.wait_exit(WAIT), 0, server.stderr)
        self.assertEqual(self.versions_on_next_server("st"), (3, [1, 2, 3]))
        with HttpProcess("--backend", "local", data_dir=self.data_dir, name="next") as after:
            legacy = HttpSession(after.port)
            self.assertEqual(legacy.call("tasks/get", {"taskId": task_id})["result"]["status"],
                             "completed")

    def test_stdio_stop_signal_before_any_input_stops_the_server(self):
        # The signal watch starts after the first message, or soon without one
        # (mcp/stdio_transport.h on_settled): a signal sent at once waits, blocked, and is read
        # then; one sent to a server that was never written to is read as well.
        for delay in (0.0, 0.5):
            server = ServerProcess(["--backend", "local"], data_dir=self.data_dir)
            self.addCleanup(server.__exit__, None, None, None)
            server.wait_for_stderr("data dir")  # signals blocked; nothing written to it yet
            time.sleep(delay)  # the point: within, then past, the settling time without input
            server.proc.send_signal(signal.SIGTERM)
            self.assertEqual(server.wait_exit(WAIT), 0, server.stderr)
            self.assertIn("SIGTERM: no more input is read", server.stderr)

    def test_stdio_call_past_the_drain_timeout_is_cancelled(self):
        server = self.start_stdio("--drain-timeout", "1")
        started = time.monotonic()
        server.proc.send_signal(signal.SIGINT)
        self.assertEqual(server.wait_exit(WAIT), 0, server.stderr)
        self.assertLess(time.monotonic() - started, 8.0)
        self.assertIn("drain timeout; cancelling 1 call(s)", server.stderr)
        self.assertEqual(self.versions_on_next_server("piped"), (2, [1, 2]))

    def test_drain_timeout_is_validated(self):
        for args, env, named in ((["--drain-timeout", "3601"], {}, "--drain-timeout"),
                                 (["--drain-timeout", "-1"], {}, "--drain-timeout"),
                                 ([], {"IMGMCP_DRAIN_TIMEOUT": "soon"}, "IMGMCP_DRAIN_TIMEOUT")):
            done = subprocess.run([binary_path(), *args, "--version"], env=clean_env(env),
                                  capture_output=True, text=True, timeout=WAIT)
            self.assertEqual(done.returncode, 2, done.stderr)
            self.assertRegex(done.stderr, re.escape(named) + r": expected an integer from 0 to "
                             r"3600")
        self.assertIn("--drain-timeout SECONDS", subprocess.run(
            [binary_path(), "--help"], capture_output=True, text=True, timeout=WAIT).stdout)


if __name__ == "__main__":
    unittest.main()
