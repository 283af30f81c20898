"""Batch delivery across PostgreSQL replicas (README.md, "Half price for work that can wait"): two
real imgmcp replicas on one PostgreSQL database, their backend the Gemini fake's Batch API. One of
them holds the store's batch poll lock and follows the job; `kill -9` of that replica while the job
runs, and the other takes the lock over, reads the job on and commits each answer once.
"""
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fake_gemini_support import TEST_KEY, FakeGemini  # noqa: E402
from replica_support import Replica, pg_cluster, structured  # noqa: E402
from test_batch_delivery import ended, wait_until  # noqa: E402
from test_tasks import TasksClient  # noqa: E402

WAIT = 60.0
CLUSTER = pg_cluster.SharedCluster()
setUpModule, tearDownModule = CLUSTER.start, CLUSTER.close


def leads(replica):
    return "created as batches/" in replica.stderr


class BatchAcrossReplicas(unittest.TestCase):
    def setUp(self):
        self.fake = FakeGemini()
        self.addCleanup(self.fake.close)
        # Running until its fourth read: long enough to kill the replica that follows it.
        self.fake.configure(batch_states=["pending", "running", "running", "running",
                                          "succeeded"])
        env = {"GEMINI_API_KEY": TEST_KEY, "GEMINI_BASE_URL": self.fake.base_url}
        url = CLUSTER.create_database("batch")
        self.replicas = []
        for name in ("a", "b"):
            replica = Replica(url, "--batch-window", "0.3", "--batch-poll", "0.3", env=env,
                              name=name, backend="gemini")
            self.addCleanup(replica.close, check=False)
            self.replicas.append(replica)

    def test_the_other_replica_takes_over_a_job_whose_poller_was_killed(self):
        ids = [TasksClient(replica.port).start("generate_image", {
            "session_id": f"k{i}", "prompt": "a green kite", "delivery": "batch",
            "inline": "none"})["taskId"] for i, replica in enumerate(self.replicas)]
        wait_until("the job's first read", lambda: any(
            e.get("rpc") == "batches.get" for e in self.fake.requests()))
        leader = [r for r in self.replicas if leads(r)]
        self.assertEqual(len(leader), 1, "one replica created the job")
        leader[0].kill()
        def reads():
            return sum(e.get("rpc") == "batches.get" for e in self.fake.requests())
        read_before = reads()
        survivor = next(r for r in self.replicas if r is not leader[0])
        client = TasksClient(survivor.port)
        for task_id in ids:
            done = ended(client, task_id)
            self.assertEqual(done["status"], "completed", done)
            self.assertEqual(structured({"result": done["result"]})["version"], 1)
        self.assertFalse(leads(survivor), "the survivor created no job of its own")
        self.assertGreater(reads(), read_before, "the survivor read the job on")
        jobs = self.fake.batches()
        self.assertEqual([job["requests"] for job in jobs], [2], jobs)


if __name__ == "__main__":
    unittest.main()
