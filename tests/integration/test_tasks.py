"""MCP Tasks (the io.modelcontextprotocol/tasks extension, mcp/task_runner.h) against the
real binary over HTTP with MCP 2026-07-28 stateless requests: generate_image and edit_image from a
client that declared the extension are answered with a task, polled with tasks/get until their
version is committed; tasks of one session commit in the order they were created; a cancelled task
commits nothing, whether it was queued behind another or running at the (fake) backend.
"""
import http.client
import json
import os
import shutil
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fake_gemini_support import FakeGeminiTestCase, TEST_KEY  # noqa: E402
from replica_support import ModernClient, draw_prompt, structured  # noqa: E402
from imgmcp_process import HttpProcess  # noqa: E402  (tests/support)

TASKS = "io.modelcontextprotocol/tasks"
WAIT = 30.0


class TasksClient(ModernClient):
    """A modern client that declares the tasks extension (unless told not to)."""

    def __init__(self, port, tasks=True, token=None):
        super().__init__(port)
        self.tasks, self.token = tasks, token

    def _meta(self):
        meta = super()._meta()
        if self.tasks:
            meta["io.modelcontextprotocol/clientCapabilities"] = {"extensions": {TASKS: {}}}
        return meta

    def _headers(self, method=None, params=None):
        h = super()._headers(method, params)
        if self.token:
            h["Authorization"] = f"Bearer {self.token}"
        if params and "taskId" in params:
            h["Mcp-Name"] = params["taskId"]
        return h

    def error_code(self, method, params):
        """The JSON-RPC error code a request is refused with (any HTTP status)."""
        conn = http.client.HTTPConnection(self.host, self.port, timeout=self.timeout)
        try:
            params = dict(params, _meta=self._meta())
            conn.request("POST", "/mcp", body=json.dumps(
                {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).encode(),
                headers=self._headers(method, params))
            return json.loads(conn.getresponse().read())["error"]["code"]
        finally:
            conn.close()

    def start(self, tool, arguments):
        """A tools/call that must be answered with a task: its CreateTaskResult."""
        result = self.call_tool(tool, arguments)["result"]
        assert result.get("resultType") == "task", result
        return result

    def get(self, task_id):
        return self.call("tasks/get", {"taskId": task_id})

    def wait_status(self, task_id, statuses=("completed", "failed", "cancelled"), timeout=WAIT):
        deadline = time.monotonic() + timeout
        while True:
            task = self.get(task_id)["result"]
            if task["status"] in statuses:
                return task
            if time.monotonic() > deadline:
                raise AssertionError(f"task {task_id} still {task['status']} after {timeout} s")
            time.sleep(min(task.get("pollIntervalMs", 100), 100) / 1000)


def version_of(task):
    assert task["status"] == "completed", task
    return structured({"result": task["result"]})["version"]


def current_version(client, session_id):
    got = structured(client.call_tool("get_image", {"session_id": session_id, "inline": "none"}))
    return got["version"]


class LocalTasks(unittest.TestCase):
    """The offline backend: fast tasks, ordering and the protocol's edges."""

    @classmethod
    def setUpClass(cls):
        cls.server = HttpProcess("--backend", "local", "--task-ttl", "120")
        cls.addClassCleanup(cls.server.close)
        cls.client = TasksClient(cls.server.port)
        cls.plain = TasksClient(cls.server.port, tasks=False)  # answered directly

    def test_a_generate_task_completes_with_its_version(self):
        created = self.client.start("generate_image", {"session_id": "t1", "prompt": "a square",
                                                       "inline": "none"})
        for field in ("taskId", "status", "createdAt", "lastUpdatedAt", "ttlMs", "pollIntervalMs"):
            self.assertIn(field, created)
        self.assertEqual(created["ttlMs"], 120_000)  # --task-ttl 120
        task = self.client.wait_status(created["taskId"])
        self.assertEqual(version_of(task), 1)
        self.assertEqual(task["resultType"], "complete")
        self.assertEqual(current_version(self.client, "t1"), 1)
        # Read again once finished: the same result.
        self.assertEqual(version_of(self.client.get(created["taskId"])["result"]), 1)

    def test_without_the_extension_the_call_answers_directly(self):
        plain = TasksClient(self.server.port, tasks=False)
        result = plain.call_tool("generate_image", {"session_id": "t2", "prompt": "p",
                                                    "inline": "none"})["result"]
        self.assertNotIn("taskId", result)
        self.assertEqual(structured({"result": result})["version"], 1)
        self.assertEqual(plain.error_code("tasks/get", {"taskId": "0" * 32}), -32021)

    def test_tasks_of_one_session_commit_in_the_order_they_were_created(self):
        structured(self.plain.call_tool("generate_image", {"session_id": "t3", "prompt": "base",
                                                            "inline": "none"}))
        ids = [self.client.start("edit_image", {"session_id": "t3", "prompt": draw_prompt(i),
                                                "inline": "none"})["taskId"]
               for i in range(5)]
        versions = [version_of(self.client.wait_status(task_id)) for task_id in ids]
        self.assertEqual(versions, [2, 3, 4, 5, 6])

    def test_unknown_task_and_removed_methods(self):
        self.assertEqual(self.client.error_code("tasks/get", {"taskId": "f" * 32}), -32602)
        for method in ("tasks/list", "tasks/result"):
            self.assertEqual(self.client.error_code(method, {"taskId": "f" * 32}), -32601)


class GeminiTasks(FakeGeminiTestCase):
    """The Gemini fake holds a call at a gate, so a task can be caught running or queued."""

    def setUp(self):
        super().setUp()
        self.server = HttpProcess("--backend", "gemini",
                                  env={"GEMINI_API_KEY": TEST_KEY,
                                       "GEMINI_BASE_URL": self.fake.base_url})
        self.addCleanup(self.server.close)
        self.client = TasksClient(self.server.port)
        self.plain = TasksClient(self.server.port, tasks=False)

    def edit(self, session_id, prompt):
        return self.client.start("edit_image", {"session_id": session_id, "prompt": prompt,
                                                "inline": "none"})["taskId"]

    def test_cancelling_a_queued_task_commits_nothing(self):
        structured(self.plain.call_tool("generate_image", {"session_id": "g1", "prompt": "base",
                                                            "inline": "none"}))
        self.fake.script({"hold": "first"})
        first = self.edit("g1", draw_prompt(1))
        self.fake.wait(requests=2, held=1)
        queued = self.edit("g1", draw_prompt(2))
        self.assertEqual(self.client.call("tasks/cancel", {"taskId": queued})["result"]
                         ["resultType"], "complete")
        self.assertEqual(self.client.wait_status(queued)["status"], "cancelled")
        self.fake.release("first")
        self.assertEqual(version_of(self.client.wait_status(first)), 2)
        self.assertEqual(current_version(self.client, "g1"), 2)
        self.assertEqual(len(self.fake.requests()), 2)  # the queued edit never reached Gemini

    def test_cancelling_a_running_task_aborts_it_and_commits_nothing(self):
        structured(self.plain.call_tool("generate_image", {"session_id": "g2", "prompt": "base",
                                                            "inline": "none"}))
        self.fake.script({"hold": "running"})
        running = self.edit("g2", draw_prompt(1))
        self.fake.wait(requests=2, held=1)
        self.client.call("tasks/cancel", {"taskId": running})
        self.assertEqual(self.client.wait_status(running)["status"], "cancelled")
        # The next edit gets the turn the cancelled one gave up, and the next version number.
        self.fake.release("running")
        self.assertEqual(version_of(self.client.wait_status(self.edit("g2", draw_prompt(2)))), 2)


class RestartTasks(FakeGeminiTestCase):
    """A task whose process died: its row (SQLite) outlives it, settled, and it never runs twice."""

    def start_server(self, data_dir):
        server = HttpProcess("--backend", "gemini", data_dir=data_dir,
                             env={"GEMINI_API_KEY": TEST_KEY,
                                  "GEMINI_BASE_URL": self.fake.base_url})
        self.addCleanup(server.close, check=False)
        return server

    def test_a_task_whose_process_was_killed_is_settled_and_never_run_again(self):
        data_dir = tempfile.mkdtemp(prefix="imgmcp-tasks-")
        self.addCleanup(shutil.rmtree, data_dir, True)
        first = self.start_server(data_dir)
        plain = TasksClient(first.port, tasks=False)
        structured(plain.call_tool("generate_image", {"session_id": "r1", "prompt": "base",
                                                      "inline": "none"}))
        self.fake.script({"hold": "killed"})
        task_id = TasksClient(first.port).start(
            "edit_image", {"session_id": "r1", "prompt": draw_prompt(1), "inline": "none"})["taskId"]
        self.fake.wait(requests=2, held=1)
        first.kill()
        self.fake.release("killed")

        second = self.start_server(data_dir)
        client = TasksClient(second.port)
        task = client.wait_status(task_id)
        self.assertEqual(task["status"], "failed", task)  # it committed nothing before it died
        self.assertIn("error", task)
        self.assertEqual(current_version(client, "r1"), 1)
        self.assertEqual(len(self.fake.requests()), 2)  # not run again by the new process


class OwnerTasks(unittest.TestCase):
    """A task belongs to the bearer token it was created with: a server on the same store with
    another token does not know it."""

    def start_server(self, data_dir, token):
        server = HttpProcess("--backend", "local", "--auth-token", token, data_dir=data_dir)
        self.addCleanup(server.close, check=False)
        return server

    def test_another_token_cannot_see_the_task(self):
        data_dir = tempfile.mkdtemp(prefix="imgmcp-tasks-")
        self.addCleanup(shutil.rmtree, data_dir, True)
        first = self.start_server(data_dir, "token-one-" + "a" * 24)
        alice = TasksClient(first.port, token="token-one-" + "a" * 24)
        task_id = alice.start("generate_image", {"session_id": "o1", "prompt": "p",
                                                 "inline": "none"})["taskId"]
        self.assertEqual(version_of(alice.wait_status(task_id)), 1)
        first.stop()

        second = self.start_server(data_dir, "token-two-" + "b" * 24)
        bob = TasksClient(second.port, token="token-two-" + "b" * 24)
        self.assertEqual(bob.error_code("tasks/get", {"taskId": task_id}), -32602)
        self.assertEqual(bob.error_code("tasks/cancel", {"taskId": task_id}), -32602)


if __name__ == "__main__":
    unittest.main()
