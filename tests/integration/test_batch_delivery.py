"""generate_image with delivery "batch" (README.md, "Half price for work that can wait") against
the real binary over HTTP (MCP 2026-07-28, tasks extension) and the Gemini fake's Batch API: calls
within a window become one job; each task completes with its own version at the batch price; a
SIGKILLed server's successor resumes following the job; a cancel before the window drops the call
and one after the job was created cancels the job upstream; a job that expires and a request
that fails fail their tasks saying so; a client without tasks is told what it needs.
"""
import os
import sys
import time
import unittest
from concurrent.futures import ThreadPoolExecutor

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fake_gemini_support import FakeGeminiTestCase, TEST_KEY  # noqa: E402
from replica_support import structured  # noqa: E402
from imgmcp_process import HttpProcess  # noqa: E402  (tests/support)
from test_tasks import TasksClient  # noqa: E402

WAIT = 60.0
# A short window and first read (the flags take decimal seconds); with the fake's jobs pending
# until their first read, which finds them succeeded (setUp), a call's life is about a second.
WINDOW = "0.3"
FIRST_READ = "0.3"


def wait_until(what, predicate, timeout=WAIT):
    """Polls `predicate` (a function returning a true value when done) until it holds."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} did not happen within {timeout} s")
        time.sleep(0.05)


def ended(client, task_id):
    """The task once it is no longer working (tasks/get through `client`)."""
    return client.wait_status(task_id, timeout=WAIT)


class BatchDelivery(FakeGeminiTestCase):

    def setUp(self):
        super().setUp()
        self.fake.configure(batch_states=["pending", "succeeded"])
        self.data_dir = None
        self.server = self.start()
        self.client = TasksClient(self.server.port)

    def start(self, window=WINDOW):
        server = HttpProcess("--backend", "gemini", "--batch-window", window, "--batch-poll",
                             FIRST_READ, data_dir=self.data_dir,
                             env={"GEMINI_API_KEY": TEST_KEY,
                                  "GEMINI_BASE_URL": self.fake.base_url})
        self.addCleanup(server.close, check=False)
        self.data_dir = server.data_dir
        return server

    def batch(self, prompt, **arguments):
        return self.client.start("generate_image", dict(
            {"prompt": prompt, "delivery": "batch", "inline": "none"}, **arguments))

    def rpcs(self, rpc):
        return [e for e in self.fake.requests() if e.get("rpc") == rpc]

    def test_calls_of_a_window_become_one_job_and_commit_at_half_the_price(self):
        now = structured(self.client.__class__(self.server.port, tasks=False).call_tool(
            "generate_image", {"session_id": "now", "prompt": "a red square", "inline": "none"}))
        created = [self.batch("a red square", session_id=f"b{i}") for i in range(3)]
        for task in created:
            self.assertEqual(task["status"], "working")
            self.assertIn("waiting for the batch window", task["statusMessage"])
        said = set()
        for task in created:
            def seen(task_id=task["taskId"]):
                got = self.client.get(task_id)["result"]
                said.add(got.get("statusMessage", ""))
                return got if got["status"] != "working" else None
            done = wait_until("the batch task's end", seen)
            self.assertEqual(done["status"], "completed", done)
            result = structured({"result": done["result"]})
            self.assertEqual(result["version"], 1)
            self.assertEqual(result["cost"]["price_factor"], 0.5, result["cost"])
            self.assertAlmostEqual(result["cost"]["usd"], now["cost"]["usd"] / 2, places=9)
        self.assertTrue(any(m.startswith("in Gemini batch batches/") for m in said), said)
        jobs = self.fake.batches()
        self.assertEqual(len(jobs), 1, jobs)
        self.assertEqual(jobs[0]["requests"], 3, jobs)
        self.assertEqual(len(self.rpcs("batches.create")), 1)
        for i in range(3):  # each in its own session, as version 1
            got = structured(self.client.call_tool("get_image", {"session_id": f"b{i}",
                                                                 "inline": "none"}))
            self.assertEqual(got["version"], 1)

    def test_many_calls_at_once_each_land_once_after_what_ran_on_their_session(self):
        """16 batch calls sent at once on 4 sessions while an edit of each session holds its
        turn (held at the fake): the job's answers arrive while the edits still run (they are
        released only once the job has succeeded), so each commit waits for its session's edit.
        Every batch call completes; each session ends with the base, the edit, then its four
        batch versions, none lost or doubled."""
        plain = TasksClient(self.server.port, tasks=False)
        sessions = [f"m{i}" for i in range(4)]
        for s in sessions:
            structured(plain.call_tool("generate_image", {"session_id": s, "prompt": "base",
                                                          "inline": "none"}))
        self.fake.script(*([{"hold": "edits"}] * 4))
        failures = []

        def edit(s):
            try:
                structured(plain.call_tool("edit_image", {"session_id": s, "prompt": "invert",
                                                          "inline": "none"}))
            except Exception as e:  # noqa: BLE001 (reported below)
                failures.append(repr(e))

        def batch(i):
            return self.batch(f"variant {i}", session_id=sessions[i % 4])["taskId"]
        with ThreadPoolExecutor(max_workers=16) as pool:
            edits = [pool.submit(edit, s) for s in sessions]
            self.fake.wait(held=4)  # every edit holds its session's turn now
            ids = list(pool.map(batch, range(16)))
            wait_until("the job's success", lambda: [
                j for j in self.fake.batches() if j["state"] == "succeeded"])
            self.assertTrue(all(not e.done() for e in edits), "the edits still run")
            self.fake.release("edits")
        self.assertEqual(failures, [])
        for task_id in ids:
            done = ended(self.client, task_id)
            self.assertEqual(done["status"], "completed", done)
        for s in sessions:
            history = structured(plain.call_tool("get_image", {"session_id": s,
                                                               "inline": "none"}))["history"]
            self.assertEqual([h["operation"] for h in history],
                             ["generate", "edit"] + ["generate"] * 4, history)
            self.assertEqual([h["version"] for h in history], list(range(1, 7)), history)

    def test_a_client_without_tasks_is_told_batch_delivery_needs_them(self):
        plain = TasksClient(self.server.port, tasks=False)
        result = plain.call_tool("generate_image", {"prompt": "p", "delivery": "batch"})["result"]
        self.assertTrue(result["isError"], result)
        self.assertIn("task-capable client", result["content"][0]["text"])
        self.assertEqual(self.fake.batches(), [])

    def test_vertex_and_the_local_engine_refuse_batch_delivery_saying_why(self):
        for backend, env, reason in (
                ("vertex", {"GOOGLE_API_KEY": "AQ.imgmcp-express-batch",
                            "IMGMCP_VERTEX_BASE_URL": self.fake.base_url, "HOME": "/nonexistent"},
                 "Vertex batch prediction reads its requests from Cloud Storage or BigQuery"),
                ("local", {}, "needs the Gemini API backend")):
            server = HttpProcess("--backend", backend, env=env)
            self.addCleanup(server.close, check=False)
            client = TasksClient(server.port)
            created = client.start("generate_image", {"prompt": "p", "delivery": "batch",
                                                      "inline": "none"})
            done = ended(client, created["taskId"])
            self.assertEqual(done["status"], "completed", done)
            self.assertTrue(done["result"]["isError"], done)
            self.assertIn(reason, done["result"]["content"][0]["text"])
        self.assertEqual(self.fake.batches(), [])
        self.assertEqual(self.fake.requests(), [])

    def test_a_restarted_server_resumes_following_the_job(self):
        # Succeeded at its fifth read: 0.3 + 0.6 + 1.2 + 2.4 + 4.8 s after its creation, were
        # its first follower to live.
        self.fake.configure(batch_states=["pending"] + ["running"] * 4 + ["succeeded"])
        ids = [self.batch("a blue circle", session_id=f"r{i}")["taskId"] for i in range(2)]
        wait_until("the job's first read", lambda: self.rpcs("batches.get"))
        self.server.kill()
        read_before = len(self.rpcs("batches.get"))
        self.server = self.start()
        self.client = TasksClient(self.server.port)
        for task_id in ids:
            done = ended(self.client, task_id)
            self.assertEqual(done["status"], "completed", done)
            self.assertEqual(structured({"result": done["result"]})["version"], 1)
        self.assertEqual(len(self.fake.batches()), 1, "the job was not created again")
        self.assertGreater(len(self.rpcs("batches.get")), read_before, "the successor read it")

    def test_a_call_cancelled_in_its_window_is_never_sent(self):
        self.server.close()
        self.data_dir = None
        self.server = self.start(window="2")  # room to cancel in
        self.client = TasksClient(self.server.port)
        dropped = self.batch("a cancelled call", session_id="c1")["taskId"]
        self.client.call("tasks/cancel", {"taskId": dropped})
        self.assertEqual(self.client.get(dropped)["result"]["status"], "cancelled")
        kept = self.batch("a kept call", session_id="c2")["taskId"]
        done = ended(self.client, kept)
        self.assertEqual(done["status"], "completed", done)
        jobs = self.fake.batches()
        self.assertEqual([job["requests"] for job in jobs], [1], jobs)
        self.assertEqual(self.client.get(dropped)["result"]["status"], "cancelled")

    def test_cancelling_every_call_of_a_job_cancels_it_upstream(self):
        self.fake.configure(batch_states=["pending", "running"])  # runs until cancelled
        task_id = self.batch("a long job", session_id="u1")["taskId"]
        wait_until("the job", lambda: self.fake.batches())
        self.client.call("tasks/cancel", {"taskId": task_id})
        self.assertEqual(self.client.get(task_id)["result"]["status"], "cancelled")
        job = wait_until("the upstream cancel", lambda: [
            j for j in self.fake.batches() if j["state"] == "cancelled"])[0]
        self.assertEqual(job["cancels"], 1, job)
        got = self.client.call_tool("get_image", {"session_id": "u1"})["result"]
        self.assertTrue(got["isError"], got)  # nothing was committed

    def test_an_expired_job_fails_its_tasks_naming_it(self):
        self.fake.configure(batch_states=["pending", "expired"])
        task_id = self.batch("an expiring call")["taskId"]
        done = ended(self.client, task_id)
        self.assertEqual(done["status"], "failed", done)
        self.assertIn("ended expired", done["statusMessage"])
        self.assertIn("nothing was committed", done["error"]["message"])

    def test_a_request_that_fails_fails_its_task_with_the_reason(self):
        self.fake.script({"status": 400})
        task_id = self.batch("a refused call")["taskId"]
        done = ended(self.client, task_id)
        self.assertEqual(done["status"], "failed", done)
        self.assertIn("delivery \"batch\") failed", done["error"]["message"])


if __name__ == "__main__":
    unittest.main()
