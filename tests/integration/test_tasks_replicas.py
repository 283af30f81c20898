"""MCP Tasks (io.modelcontextprotocol/tasks, mcp/task_runner.h) across PostgreSQL replicas:
scripts/cluster's PostgreSQL, three real imgmcp replicas and HAProxy, their backend the Gemini fake
(which holds a call at a gate, so a task can be caught running or queued), modern stateless
requests only.

- Through HAProxy, 20 tasks on one session, each created once the one before was answered (the
  first held at the fake, so all of them wait in line), commit versions 1..20 in creation order.
- A task created on replica A is polled, cancelled (queued, or running: its call is woken and its
  turn given back at once) and seen completed with its result through replica B, while a listener
  on replica C receives every status change; a cancelled queued task leaves no version.
- `kill -9` of the replica running a task: a poll through another replica finds it failed within
  seconds, saying the replica stopped; the session's turn is free, nothing is committed twice, and
  a task that replica completed earlier is still read with its result.
"""
import os
import re
import signal
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fake_gemini_support import FakeGeminiTestCase, TEST_KEY  # noqa: E402
from replica_support import (SubscriptionListener, draw_prompt, read_version_file,  # noqa: E402
                             squares_drawn, structured)
from test_cluster_script import REPLICA, start_cluster  # noqa: E402
from test_tasks import TasksClient, version_of  # noqa: E402

WAIT = 30.0
N = 20  # tasks in the ordering test
SETTLED_WITHIN = 10.0  # seconds from kill -9 to a poll finding the task failed


class _ClassScope:
    """What start_cluster needs of a test, for a cluster that serves a whole class."""

    def __init__(self, cls):
        self.addCleanup = cls.addClassCleanup

    @staticmethod
    def assertRegex(text, pattern, msg=None):
        if not re.search(pattern, text):
            raise AssertionError(f"{text!r} does not match {pattern!r}: {msg}")


def replicas_started(lines):
    """{index: (pid, port)} once all three replicas said where they listen."""
    found = {}
    for line in lines:
        m = REPLICA.search(line)
        if m:
            found[int(m.group(1))] = (int(m.group(2)), int(m.group(3)))
    return found if len(found) == 3 else None


def tasks_created_by(lines, index):
    return [line for line in lines
            if line.startswith(f"[replica {index}]") and re.search(r"task [0-9a-f]{32} created",
                                                                    line)]


class TasksAcrossReplicas(FakeGeminiTestCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()  # the fake, stopped last: the replicas are its clients
        # Round-robin, not by session: one session's tasks are to be created on every replica.
        _, cls.stderr, cls.haproxy = start_cluster(
            _ClassScope(cls), ["--backend", "gemini", "--gemini-base-url", cls.fake.base_url],
            env={**os.environ, "GEMINI_API_KEY": TEST_KEY},
            script_flags=["--balance", "roundrobin"])
        started = cls.stderr.wait_for(replicas_started, timeout=60)
        if started is None:
            raise AssertionError("the cluster's replicas did not start:\n" + cls.stderr.text(40))
        cls.pids = {i: pid for i, (pid, _) in started.items()}
        cls.ports = {i: port for i, (_, port) in started.items()}

    def replica(self, index):
        return TasksClient(self.ports[index])

    def plain(self, index):
        """A client of replica `index` without the extension: its calls answer directly."""
        return TasksClient(self.ports[index], tasks=False)

    def base(self, client, session_id):
        """Version 1 of a new white session, made directly."""
        got = structured(client.call_tool("generate_image", {
            "session_id": session_id, "prompt": "solid white", "inline": "none"}))
        self.assertEqual(got["version"], 1)

    def edit(self, client, session_id, i):
        return client.start("edit_image", {"session_id": session_id, "prompt": draw_prompt(i),
                                           "inline": "none"})["taskId"]

    def history(self, client, session_id):
        got = structured(client.call_tool("get_image", {
            "session_id": session_id, "inline": "none", "history_limit": 100}))
        return [(h["version"], h["prompt"]) for h in got["history"]]

    def test_a_tasks_created_one_after_another_commit_in_creation_order(self):
        client = TasksClient(self.haproxy)  # every request to whichever replica HAProxy picks
        session = "ordered"
        self.fake.script({"hold": "first of ordered"})
        try:
            ids = [client.start("generate_image", {"session_id": session, "inline": "none",
                                                   "prompt": "solid white"})["taskId"]]
            self.fake.wait(requests=1, held=1)
            for i in range(1, N):
                ids.append(self.edit(client, session, i))
            self.assertEqual(len(self.fake.requests()), 1, "a task ran before the first ended")
        finally:
            self.fake.release("first of ordered")
        versions = [version_of(client.wait_status(task_id)) for task_id in ids]
        self.assertEqual(versions, list(range(1, N + 1)))
        self.assertEqual(self.history(client, session),
                         [(1, "solid white")] + [(i + 1, draw_prompt(i)) for i in range(1, N)])
        for k in (2, N // 2, N):  # version k shows the squares of tasks 1..k-1, no other
            got = structured(client.call_tool("get_image", {
                "session_id": session, "version": k, "inline": "none",
                "include_history": False}))
            self.assertEqual(squares_drawn(read_version_file(got)), set(range(1, k)),
                             f"pixels of version {k}")
        self.assertEqual(len(self.fake.requests()), N)
        for i in self.ports:  # HAProxy spread the creations over the replicas
            self.assertTrue(self.stderr.wait_for(lambda lines: tasks_created_by(lines, i)),
                            f"replica {i} created none of the tasks:\n{self.stderr.text(40)}")

    def test_b_a_task_is_polled_cancelled_and_listened_to_through_other_replicas(self):
        a, b, c = self.replica(1), self.replica(2), self.replica(3)
        session = "across"
        self.base(self.plain(1), session)
        self.fake.script({"hold": "across running"})
        self.addCleanup(self.fake.release, "across running")
        running = self.edit(a, session, 1)
        self.fake.wait(requests=2, held=1)
        queued = self.edit(a, session, 2)
        listener = SubscriptionListener(c, {"taskIds": [running, queued]})
        self.addCleanup(listener.close)
        self.assertEqual(listener.acknowledged["notifications"]["taskIds"], [running, queued])

        self.assertEqual(b.get(running)["result"]["status"], "working")
        self.assertEqual(b.get(queued)["result"]["status"], "working")
        self.assertEqual(b.call("tasks/cancel", {"taskId": queued})["result"]["resultType"],
                         "complete")
        self.assertEqual(b.wait_status(queued)["status"], "cancelled")
        self.assertEqual(listener.task_status(queued, "cancelled")["taskId"], queued)

        self.fake.release("across running")
        done = b.wait_status(running)
        self.assertEqual(version_of(done), 2)
        self.assertEqual(structured({"result": done["result"]})["prompt"], draw_prompt(1))
        heard = listener.task_status(running, "completed")
        self.assertEqual(structured({"result": heard["result"]})["version"], 2)
        # The cancelled queued task left no version, and never reached the backend.
        self.assertEqual(self.history(b, session), [(1, "solid white"), (2, draw_prompt(1))])
        self.assertEqual(len(self.fake.requests()), 2)

    def test_c_cancelling_elsewhere_wakes_the_running_call_and_frees_the_turn(self):
        a, b, c = self.replica(1), self.replica(2), self.replica(3)
        session = "woken"
        self.base(self.plain(1), session)
        self.fake.script({"hold": "woken"})
        self.addCleanup(self.fake.release, "woken")
        running = self.edit(a, session, 1)
        self.fake.wait(requests=2, held=1)
        listener = SubscriptionListener(c, {"taskIds": [running]})
        self.addCleanup(listener.close)
        b.call("tasks/cancel", {"taskId": running})
        self.assertEqual(b.wait_status(running)["status"], "cancelled")
        listener.task_status(running, "cancelled")
        # The call stays held at the fake: only waking it on replica A gives the turn back.
        following = self.edit(c, session, 2)
        self.assertEqual(version_of(c.wait_status(following)), 2)
        self.assertEqual(self.history(b, session), [(1, "solid white"), (2, draw_prompt(2))])
        self.assertEqual(a.get(running)["result"]["status"], "cancelled")

    def test_d_a_killed_replica_leaves_its_task_failed_and_its_turn_free(self):
        victim, b, c = 3, self.replica(1), self.replica(2)
        a = self.replica(victim)
        session = "killed"
        earlier = a.start("generate_image", {"session_id": session, "prompt": "solid white",
                                             "inline": "none"})["taskId"]
        self.assertEqual(version_of(a.wait_status(earlier)), 1)
        self.fake.script({"hold": "killed"})
        self.addCleanup(self.fake.release, "killed")
        running = self.edit(a, session, 1)
        self.fake.wait(requests=2, held=1)
        listener = SubscriptionListener(c, {"taskIds": [running]})
        self.addCleanup(listener.close)

        os.kill(self.pids[victim], signal.SIGKILL)
        killed_at = time.monotonic()
        failed = b.wait_status(running, timeout=SETTLED_WITHIN)
        self.assertLess(time.monotonic() - killed_at, SETTLED_WITHIN)
        self.assertEqual(failed["status"], "failed", failed)
        for message in (failed["statusMessage"], failed["error"]["message"]):
            self.assertIn("replica running this task stopped", message)
        self.assertEqual(listener.task_status(running, "failed")["error"], failed["error"])
        self.fake.release("killed")  # the dead replica's call: nobody waits for it any more

        # Its turn is free: the next edit commits version 2, the killed one nothing.
        following = self.edit(b, session, 2)
        self.assertEqual(version_of(b.wait_status(following)), 2)
        self.assertEqual(self.history(c, session), [(1, "solid white"), (2, draw_prompt(2))])
        self.assertEqual(len(self.fake.requests()), 3)
        # What the dead replica completed is still read, with its result.
        before = b.get(earlier)["result"]
        self.assertEqual(version_of(before), 1)
        self.assertEqual(structured({"result": before["result"]})["session_id"], session)


if __name__ == "__main__":
    unittest.main()
