"""The 2025-11-25 experimental tasks utility (mcp/legacy_task_json.h) against the real
binary, over stdio and over HTTP legacy sessions: a task-augmented tools/call answers with a
CreateTaskResult, tasks/get polls it, tasks/result waits for and returns the committed version,
tasks/list pages the caller's tasks, tasks/cancel of a queued task commits nothing and of a
finished one is -32602, notifications/tasks/status reaches the session that created the task,
and a task whose process died is reported by the next process on the same SQLite store. The tasks
are the same rows the 2026-07-28 extension serves (test_tasks.py).
"""
import os
import shutil
import sys
import tempfile
import threading
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fake_gemini_support import FakeGeminiTestCase, TEST_KEY  # noqa: E402
from mcp_harness import ServerProcess  # noqa: E402
from replica_support import LegacyClient, draw_prompt  # noqa: E402
from imgmcp_process import HttpProcess  # noqa: E402  (tests/support)

WAIT = 30.0
RELATED = "io.modelcontextprotocol/related-task"
TASKS_CAPABILITY = {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}
TERMINAL = ("completed", "failed", "cancelled")


class StdioSession:
    """A legacy session over the process's stdin/stdout."""

    def __init__(self, server):
        self.server = server

    def call(self, method, params=None):
        return self.server.request(method, params or {}, timeout=WAIT)

    def status_notification(self, task_id, status):
        return self.server.wait_for(
            lambda m: m.get("method") == "notifications/tasks/status"
            and m["params"]["taskId"] == task_id and m["params"]["status"] == status, WAIT)


class HttpSession(LegacyClient):
    """A legacy session on one HTTP endpoint (an Mcp-Session-Id), optionally with a token."""

    def __init__(self, port, token=None):
        super().__init__(port, token=token)


def start_task(session, tool, arguments, task=None):
    """A task-augmented tools/call: its Task."""
    response = session.call("tools/call", {"name": tool, "arguments": arguments,
                                           "task": {} if task is None else task})
    result = response["result"]
    assert "task" in result, response
    return result["task"]


def wait_status(session, task_id, statuses=TERMINAL, timeout=WAIT):
    deadline = time.monotonic() + timeout
    while True:
        task = session.call("tasks/get", {"taskId": task_id})["result"]
        if task["status"] in statuses:
            return task
        if time.monotonic() > deadline:
            raise AssertionError(f"task {task_id} still {task['status']} after {timeout} s")
        time.sleep(min(task.get("pollInterval", 100), 100) / 1000)


def version_of(payload):
    assert not payload.get("isError"), payload
    return payload["structuredContent"]["version"]


def current_version(session, session_id):
    result = session.call("tools/call", {"name": "get_image", "arguments": {
        "session_id": session_id, "inline": "none"}})["result"]
    return result["structuredContent"]["version"]


def error_code(response):
    assert "error" in response, response
    return response["error"]["code"]


class StdioTasks(unittest.TestCase):
    """One process on the offline backend over stdio, one 2025-11-25 session."""

    @classmethod
    def setUpClass(cls):
        cls.server = ServerProcess(args=["--backend", "local", "--task-ttl", "300"])
        cls.addClassCleanup(cls.server.__exit__, None, None, None)
        cls.init = cls.server.initialize()
        cls.session = StdioSession(cls.server)

    def test_capability_and_tool_task_support(self):
        self.assertEqual(self.init["capabilities"]["tasks"], TASKS_CAPABILITY)
        tools = {t["name"]: t for t in self.session.call("tools/list")["result"]["tools"]}
        for name in ("generate_image", "edit_image"):
            self.assertEqual(tools[name]["execution"], {"taskSupport": "optional"})
        self.assertNotIn("execution", tools["get_image"])

    def test_augmented_generate_completes_with_its_version(self):
        task = start_task(self.session, "generate_image",
                          {"session_id": "s1", "prompt": "a square", "inline": "none"},
                          task={"ttl": 60_000})
        for field in ("taskId", "status", "createdAt", "lastUpdatedAt", "ttl", "pollInterval"):
            self.assertIn(field, task)
        self.assertEqual(task["status"], "working")
        self.assertEqual(task["ttl"], 60_000)
        done = wait_status(self.session, task["taskId"])
        self.assertEqual(done["status"], "completed", done)
        self.assertNotIn("result", done)  # the result is tasks/result's
        payload = self.session.call("tasks/result", {"taskId": task["taskId"]})["result"]
        self.assertEqual(version_of(payload), 1)
        self.assertEqual(payload["_meta"][RELATED], {"taskId": task["taskId"]})
        self.assertEqual(current_version(self.session, "s1"), 1)
        # The session was told when the task ended.
        notified = self.session.status_notification(task["taskId"], "completed")["params"]
        self.assertEqual(notified["createdAt"], task["createdAt"])
        self.assertNotIn("_meta", notified)

    def test_a_plain_call_is_answered_directly(self):
        result = self.session.call("tools/call", {"name": "generate_image", "arguments": {
            "session_id": "s2", "prompt": "p", "inline": "none"}})["result"]
        self.assertNotIn("task", result)
        self.assertEqual(version_of(result), 1)

    def test_a_tool_error_is_a_failed_task_and_its_result_the_tool_result(self):
        task = start_task(self.session, "generate_image", {"session_id": "s3"})  # no prompt
        done = wait_status(self.session, task["taskId"])
        self.assertEqual(done["status"], "failed", done)
        self.assertIn("prompt", done["statusMessage"])
        payload = self.session.call("tasks/result", {"taskId": task["taskId"]})["result"]
        self.assertTrue(payload["isError"])
        self.assertEqual(payload["_meta"][RELATED], {"taskId": task["taskId"]})

    def test_cancelling_a_finished_task_is_invalid_params(self):
        task = start_task(self.session, "generate_image",
                          {"session_id": "s4", "prompt": "p", "inline": "none"})
        self.assertEqual(wait_status(self.session, task["taskId"])["status"], "completed")
        response = self.session.call("tasks/cancel", {"taskId": task["taskId"]})
        self.assertEqual(error_code(response), -32602)
        self.assertIn("terminal status 'completed'", response["error"]["message"])
        self.assertEqual(wait_status(self.session, task["taskId"])["status"], "completed")

    def test_refusals(self):
        unknown = {"taskId": "f" * 32}
        for method in ("tasks/get", "tasks/result", "tasks/cancel"):
            self.assertEqual(error_code(self.session.call(method, unknown)), -32602, method)
        self.assertEqual(error_code(self.session.call("tasks/list", {"cursor": "nope"})), -32602)
        # A tool that is never a task, and a malformed params.task.
        self.assertEqual(error_code(self.session.call("tools/call", {
            "name": "get_image", "arguments": {"session_id": "s1"}, "task": {}})), -32601)
        self.assertEqual(error_code(self.session.call("tools/call", {
            "name": "generate_image", "arguments": {"prompt": "p"}, "task": {"ttl": "x"}})),
            -32602)
        self.assertEqual(error_code(self.session.call("tools/call", {
            "name": "generate_image", "arguments": {"prompt": "p"}, "task": 5})), -32602)


class OlderSessions(unittest.TestCase):
    """A session that negotiated 2025-06-18 has no tasks utility: params.task is ignored."""

    def test_params_task_is_ignored_and_the_methods_do_not_exist(self):
        with ServerProcess(args=["--backend", "local"]) as server:
            init = server.initialize(version="2025-06-18")
            self.assertNotIn("tasks", init["capabilities"])
            tools = server.request("tools/list", {})["result"]["tools"]
            self.assertFalse(any("execution" in t for t in tools))
            result = server.request("tools/call", {"name": "generate_image", "arguments": {
                "session_id": "o1", "prompt": "p", "inline": "none"}, "task": {}})["result"]
            self.assertEqual(version_of(result), 1)
            for method in ("tasks/get", "tasks/result", "tasks/list", "tasks/cancel"):
                self.assertEqual(error_code(server.request(method, {"taskId": "f" * 32})),
                                 -32601, method)


class ListedTasks(unittest.TestCase):
    """tasks/list pages (100 a page) and shows only the caller's tasks."""

    def test_paging_over_stdio(self):
        with ServerProcess(args=["--backend", "local"]) as server:
            server.initialize()
            session = StdioSession(server)
            # 101 quick tasks (each a tool error: no prompt), sent without waiting.
            ids = []
            for i in range(101):
                rid = server.next_id()
                ids.append(rid)
                server.send({"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": {
                    "name": "generate_image", "arguments": {"session_id": f"l{i}"}, "task": {}}})
            created = [server.wait_for(lambda m, r=rid: m.get("id") == r and "method" not in m,
                                       WAIT)["result"]["task"]["taskId"] for rid in ids]
            first = session.call("tasks/list")["result"]
            self.assertEqual(len(first["tasks"]), 100)
            self.assertIn("nextCursor", first)
            second = session.call("tasks/list", {"cursor": first["nextCursor"]})["result"]
            self.assertNotIn("nextCursor", second)
            listed = [t["taskId"] for t in first["tasks"] + second["tasks"]]
            self.assertEqual(sorted(listed), sorted(created))
            self.assertEqual(len(set(listed)), 101)
            # Newest first.
            stamps = [t["createdAt"] for t in first["tasks"] + second["tasks"]]
            self.assertEqual(stamps, sorted(stamps, reverse=True))

    def test_another_token_sees_none_of_the_tasks(self):
        data_dir = tempfile.mkdtemp(prefix="imgmcp-tasks-legacy-")
        self.addCleanup(shutil.rmtree, data_dir, True)
        alice_token, bob_token = "token-one-" + "a" * 24, "token-two-" + "b" * 24
        first = HttpProcess("--backend", "local", "--auth-token", alice_token, data_dir=data_dir)
        self.addCleanup(first.close, check=False)
        alice = HttpSession(first.port, token=alice_token)
        mine = [start_task(alice, "generate_image", {"session_id": f"a{i}", "prompt": "p",
                                                     "inline": "none"})["taskId"]
                for i in range(3)]
        for task_id in mine:
            self.assertEqual(wait_status(alice, task_id)["status"], "completed")
        listed = [t["taskId"] for t in alice.call("tasks/list")["result"]["tasks"]]
        self.assertEqual(sorted(listed), sorted(mine))
        first.stop()

        second = HttpProcess("--backend", "local", "--auth-token", bob_token, data_dir=data_dir)
        self.addCleanup(second.close, check=False)
        bob = HttpSession(second.port, token=bob_token)
        self.assertEqual(bob.call("tasks/list")["result"]["tasks"], [])
        for method in ("tasks/get", "tasks/result", "tasks/cancel"):
            self.assertEqual(error_code(bob.call(method, {"taskId": mine[0]})), -32602, method)


class HttpGeminiTasks(FakeGeminiTestCase):
    """An HTTP legacy session; the Gemini fake holds a call so a task is caught queued."""

    def setUp(self):
        super().setUp()
        self.server = HttpProcess("--backend", "gemini", env=self.gemini_env())
        self.addCleanup(self.server.close)
        self.session = HttpSession(self.server.port)
        base = self.session.call("tools/call", {"name": "generate_image", "arguments": {
            "session_id": "g1", "prompt": "base", "inline": "none"}})["result"]
        self.assertEqual(version_of(base), 1)

    def edit(self, prompt):
        return start_task(self.session, "edit_image",
                          {"session_id": "g1", "prompt": prompt, "inline": "none"})["taskId"]

    def test_cancelling_a_queued_task_commits_nothing(self):
        listener = self.session.listen()
        self.addCleanup(listener.close)
        self.fake.script({"hold": "first"})
        first = self.edit(draw_prompt(1))
        self.fake.wait(requests=2, held=1)
        queued = self.edit(draw_prompt(2))
        cancelled = self.session.call("tasks/cancel", {"taskId": queued})["result"]
        self.assertEqual(cancelled["status"], "cancelled")
        self.assertEqual(cancelled["taskId"], queued)
        self.assertEqual(error_code(self.session.call("tasks/result", {"taskId": queued})),
                         -32602)
        self.fake.release("first")
        payload = self.session.call("tasks/result", {"taskId": first})["result"]
        self.assertEqual(version_of(payload), 2)
        self.assertEqual(current_version(self.session, "g1"), 2)
        self.assertEqual(len(self.fake.requests()), 2)  # the queued edit never reached Gemini
        # Both changes reached the session's GET stream.
        for task_id, status in ((queued, "cancelled"), (first, "completed")):
            listener.wait_for(lambda m, t=task_id, s=status:
                              m.get("method") == "notifications/tasks/status"
                              and m["params"]["taskId"] == t and m["params"]["status"] == s)

    def test_tasks_result_waits_for_the_task_to_end(self):
        self.fake.script({"hold": "held"})
        task_id = self.edit(draw_prompt(1))
        self.fake.wait(requests=2, held=1)
        answers = []
        waiter = threading.Thread(
            target=lambda: answers.append(self.session.call("tasks/result", {"taskId": task_id})))
        waiter.start()
        self.addCleanup(waiter.join, WAIT)
        self.assertEqual(self.session.call("tasks/get", {"taskId": task_id})["result"]["status"],
                         "working")
        self.assertEqual(answers, [])  # the task is held: no answer yet
        self.fake.release("held")
        waiter.join(WAIT)
        self.assertFalse(waiter.is_alive())
        self.assertEqual(version_of(answers[0]["result"]), 2)
        self.assertEqual(answers[0]["result"]["_meta"][RELATED], {"taskId": task_id})


class RestartTasks(FakeGeminiTestCase):
    """A task whose process was killed (SQLite, over stdio): the next process reports it
    failed, with nothing committed, and never runs it again."""

    def test_a_killed_process_task_is_reported_by_the_next_process(self):
        data_dir = tempfile.mkdtemp(prefix="imgmcp-tasks-legacy-")
        self.addCleanup(shutil.rmtree, data_dir, True)
        first = self.start_imgmcp(data_dir=data_dir)
        session = StdioSession(first)
        self.assertEqual(version_of(session.call("tools/call", {"name": "generate_image",
                                                                "arguments": {
            "session_id": "r1", "prompt": "base", "inline": "none"}})["result"]), 1)
        self.fake.script({"hold": "killed"})
        task_id = start_task(session, "edit_image", {"session_id": "r1",
                                                     "prompt": draw_prompt(1),
                                                     "inline": "none"})["taskId"]
        self.fake.wait(requests=2, held=1)
        first.kill()
        self.fake.release("killed")

        second = StdioSession(self.start_imgmcp(data_dir=data_dir))
        task = wait_status(second, task_id)
        self.assertEqual(task["status"], "failed", task)
        self.assertTrue(task.get("statusMessage"), task)
        response = second.call("tasks/result", {"taskId": task_id})
        self.assertEqual(error_code(response), -32603)
        self.assertEqual(current_version(second, "r1"), 1)
        self.assertEqual(len(self.fake.requests()), 2)  # not run again by the new process
        listed = [t["taskId"] for t in second.call("tasks/list")["result"]["tasks"]]
        self.assertIn(task_id, listed)


if __name__ == "__main__":
    unittest.main()
