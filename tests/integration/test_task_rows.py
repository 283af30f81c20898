"""What a task keeps, against the real binary on SQLite (docs/design.md §3 "Tasks"): a task row
holds no image bytes — not the base64 images its request imported, not the image its result
showed (`inline: "full"` or a preview) — yet tasks/get and tasks/result show the result's image,
rebuilt from the committed version; reset_session empties what the session's tasks kept; and
expired rows are removed while the server runs (every half --task-ttl, at least every second),
not only at the next start. Read straight from the data dir's imgmcp.db with Python's sqlite3.
"""
import base64
import os
import shutil
import sqlite3
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from replica_support import ModernClient, structured  # noqa: E402
from test_tasks import TasksClient  # noqa: E402
from test_tasks_legacy import HttpSession, start_task  # noqa: E402
from test_tasks_legacy import wait_status as legacy_wait_status  # noqa: E402
from imgmcp_process import HttpProcess  # noqa: E402  (tests/support)
from tools_support import noisy_png  # noqa: E402

WAIT = 30.0
ROW_LIMIT = 16 * 1024  # a row's request and result, without images: a few kilobytes


class TaskRowsTest(unittest.TestCase):
    def setUp(self):
        self.data_dir = tempfile.mkdtemp(prefix="imgmcp-task-rows-")
        self.addCleanup(shutil.rmtree, self.data_dir, True)
        # Rows outlive every wait here, however slow the build (a sanitizer's), except in the
        # test of expiry, which starts its own server with a 2 s --task-ttl.
        self.server = self.start_server(task_ttl=600)
        self.db = sqlite3.connect(os.path.join(self.data_dir, "imgmcp.db"), timeout=WAIT)
        self.addCleanup(self.db.close)

    def start_server(self, task_ttl):
        server = HttpProcess("--backend", "local", "--task-ttl", str(task_ttl),
                             data_dir=self.data_dir)
        self.addCleanup(server.close)
        return server

    def rows(self, session_id=None):
        query = ("SELECT task_id, session_id, length(request_json), length(result_json), "
                 "request_json, result_json, status FROM tasks")
        if session_id:
            return self.db.execute(query + " WHERE session_id = ?", (session_id,)).fetchall()
        return self.db.execute(query).fetchall()

    def import_tasks(self, client, count):
        """`count` edit tasks, each importing a ~400 KB image into a session of its own, the
        result shown in full. Returns [(session, task id)]."""
        made = []
        for i in range(count):
            png = noisy_png(360, 360, seed=i + 1)
            self.assertGreater(len(png), 300_000)
            session = f"import-{i}"
            task = client.start("edit_image", {
                "session_id": session, "prompt": "invert", "inline": "full",
                "image": {"data": base64.b64encode(png).decode(), "mime_type": "image/png"}})
            made.append((session, task["taskId"]))
        for session, task_id in made:
            self.assertEqual(client.wait_status(task_id, timeout=WAIT)["status"], "completed")
        return made

    def test_rows_keep_no_image_bytes_and_results_show_the_image_again(self):
        client = TasksClient(self.server.port)
        made = self.import_tasks(client, 4)
        for task_id, session, request_len, result_len, request, result, status in self.rows():
            self.assertEqual(status, "completed")
            self.assertLess(request_len + result_len, ROW_LIMIT, (session, request[:300]))
            self.assertIn("bytes of base64, not kept", request)
        # tasks/get shows the full image again: the committed version's bytes.
        session, task_id = made[0]
        task = client.get(task_id)["result"]
        images = [b for b in task["result"]["content"] if b["type"] == "image"]
        self.assertEqual(len(images), 1, task["result"]["content"])
        plain = ModernClient(self.server.port)
        full = plain.call_tool("get_image", {"session_id": session, "inline": "full",
                                             "include_history": False})["result"]
        full_block = [b for b in full["content"] if b["type"] == "image"][0]
        self.assertEqual(images[0]["data"], full_block["data"])
        self.assertEqual(images[0]["mimeType"], full_block["mimeType"])
        self.assertNotIn("imgmcp_rebuilt_from_version", images[0])

    def test_a_legacy_result_shows_its_preview_again(self):
        session = HttpSession(self.server.port)
        plain = ModernClient(self.server.port)
        structured(plain.call_tool("generate_image", {"session_id": "lp", "prompt": "a square",
                                                      "inline": "none"}))
        task = start_task(session, "edit_image", {"session_id": "lp", "prompt": "invert"})
        legacy_wait_status(session, task["taskId"], ("completed",), WAIT)
        result = session.call("tasks/result", {"taskId": task["taskId"]})["result"]
        images = [b for b in result["content"] if b["type"] == "image"]
        self.assertEqual(len(images), 1, result["content"])
        self.assertGreater(len(images[0]["data"]), 1000)  # a preview of the 1024x1024 version
        (_, _, request_len, result_len, _, _, _), = self.rows("lp")
        self.assertLess(request_len + result_len, ROW_LIMIT)

    def test_reset_session_empties_what_its_tasks_kept(self):
        client = TasksClient(self.server.port)
        (session, task_id), = self.import_tasks(client, 1)
        plain = ModernClient(self.server.port)
        structured(plain.call_tool("reset_session", {"session_id": session}))
        (_, _, request_len, result_len, _, _, status), = self.rows(session)
        self.assertEqual((request_len, result_len, status), (0, 0, "completed"))
        task = client.get(task_id)["result"]  # still readable: which version it committed
        self.assertEqual(task["status"], "completed")
        self.assertEqual(task["result"]["structuredContent"]["version"], 2)

    def test_expired_rows_go_while_the_server_runs(self):
        self.server.close()
        self.server = self.start_server(task_ttl=2)
        client = TasksClient(self.server.port)
        self.import_tasks(client, 2)
        self.assertEqual(len(self.rows()), 2)
        # --task-ttl 2: each row expires 2 s after its task ended and is swept within 1 s more.
        deadline = time.monotonic() + 15
        while self.rows():
            self.assertLess(time.monotonic(), deadline, "expired task rows stayed")
            time.sleep(0.2)  # polls the database
        self.assertTrue(self.server.alive())


if __name__ == "__main__":
    unittest.main()
