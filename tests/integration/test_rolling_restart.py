"""A rolling restart through scripts/cluster (PostgreSQL, three replicas, HAProxy; README.md,
"Draining and rolling restarts"): five clients each stream sequential edit_image calls to a
session of their own, as MCP 2026-07-28 stateless requests through HAProxy's one URL, while
SIGHUP makes the script restart every replica in turn (each drains, exits 0 and comes back on its
port before the next goes). No call may fail, and every session must hold exactly the edits its
client sent, once each, in send order.

Each client edits until the roll is done and then a few more times (at most MAX_EDITS; on a
2-core machine that is some tens of edits per client during the roll, not hundreds)."""
import os
import re
import signal
import subprocess
import threading
import time
import unittest

from replica_support import CallFailed, ModernClient
from test_cluster_script import Lines

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
CLIENTS = 5
MAX_EDITS = 300     # per client
AFTER_ROLL = 3      # edits each client makes once the roll is done
TEST_TIMEOUT = 150  # seconds


def prompt(client, i):
    """A local-backend edit naming its client and number: the history shows which edit it was."""
    return f'text "c{client} e{i}" at 4,4'



class Editor(threading.Thread):
    """One client: a session of its own, edited again and again until told to finish."""

    def __init__(self, port, index, roll_done):
        super().__init__(daemon=True)
        self.client = ModernClient(port)
        self.index = index
        self.session = f"roll-{index}"
        self.roll_done = roll_done
        self.sent = []       # prompts of the edits answered, in send order
        self.failures = []   # what went wrong, per failed call
        self.during_roll = 0

    def call(self, name, arguments):
        try:
            response = self.client.call_tool(name, arguments)
        except CallFailed as e:
            self.failures.append(f"{name}: {e}")
            return None
        result = response.get("result", {})
        if "error" in response or result.get("isError"):
            self.failures.append(f"{name}: {response}")
            return None
        return result["structuredContent"]

    def run(self):
        self.call("generate_image", {"session_id": self.session, "prompt": "solid white",
                                     "inline": "none"})
        after = 0
        while len(self.sent) < MAX_EDITS and after < AFTER_ROLL and not self.failures:
            done_before = self.roll_done.is_set()
            text = prompt(self.index, len(self.sent))
            got = self.call("edit_image", {"session_id": self.session, "prompt": text,
                                           "inline": "none"})
            if got is None:
                return
            self.sent.append(text)
            if got["version"] != len(self.sent) + 1:
                self.failures.append(f"edit {len(self.sent)} became v{got['version']}")
            if done_before:
                after += 1
            else:
                self.during_roll += 1

    def history(self):
        """Every version's (number, parent, prompt), oldest first, paging back from the newest."""
        entries, before = [], None
        while True:
            arguments = {"session_id": self.session, "inline": "none", "history_limit": 100}
            if before:
                arguments["history_before"] = before
            page = self.call("get_image", arguments)
            entries = page["history"] + entries
            before = page.get("history_more_before")
            if not before:
                return [(h["version"], h.get("parent_version"), h.get("prompt")) for h in entries]


class RollingRestartTest(unittest.TestCase):
    def setUp(self):
        def on_alarm(*_):
            raise TimeoutError(f"test exceeded {TEST_TIMEOUT} s")
        signal.signal(signal.SIGALRM, on_alarm)
        signal.alarm(TEST_TIMEOUT)
        self.addCleanup(signal.alarm, 0)

    def start_cluster(self):
        proc = subprocess.Popen(
            [os.path.join(ROOT, "scripts", "cluster"), "--replicas", "3", "--",
             "--backend", "local", "--max-versions", "0"],
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        stderr = Lines(proc.stderr)

        def cleanup():
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
                try:
                    proc.wait(timeout=60)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
        self.addCleanup(cleanup)
        url = proc.stdout.readline().strip()
        self.assertRegex(url, r"^http://127\.0\.0\.1:\d+/mcp$", stderr.text())
        return proc, stderr, int(url.split(":")[2].split("/")[0])

    def test_rolling_restart_under_load_fails_no_call(self):
        proc, stderr, port = self.start_cluster()
        roll_done = threading.Event()
        editors = [Editor(port, i, roll_done) for i in range(CLIENTS)]
        for e in editors:
            e.start()
        # Every client is editing before the roll starts.
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and not all(e.sent or e.failures for e in editors):
            time.sleep(0.05)
        proc.send_signal(signal.SIGHUP)
        done = stderr.wait_for(lambda lines: any("roll: done" in l for l in lines), timeout=90)
        roll_done.set()
        for e in editors:
            e.join(60)
        self.assertTrue(done, stderr.text(60))
        exits = re.findall(r"roll: replica (\d) exited \((-?\d+)\)", stderr.text())
        self.assertEqual(exits, [("1", "0"), ("2", "0"), ("3", "0")], stderr.text(60))
        self.assertEqual([f for e in editors for f in e.failures], [], stderr.text(80))
        self.assertTrue(all(e.during_roll > 0 for e in editors),
                        [e.during_roll for e in editors])
        for e in editors:
            history = e.history()
            self.assertEqual([v for v, _, _ in history], list(range(1, len(e.sent) + 2)),
                             f"session {e.session}: lost or duplicated versions")
            self.assertEqual([p for _, _, p in history[1:]], e.sent,
                             f"session {e.session}: not in send order")
            self.assertEqual([parent for _, parent, _ in history[1:]],
                             list(range(1, len(e.sent) + 1)))
        print(f"edits per client during the roll: {[e.during_roll for e in editors]}, "
              f"in all: {[len(e.sent) for e in editors]}")
        proc.send_signal(signal.SIGTERM)
        self.assertEqual(proc.wait(timeout=60), 0, stderr.text(30))


if __name__ == "__main__":
    unittest.main()
