"""A rolling restart through scripts/cluster (PostgreSQL, three replicas, HAProxy; README.md,
"Draining and rolling restarts"): five clients each stream sequential edit_image calls to a
session of their own, as MCP 2026-07-28 stateless requests through HAProxy's one URL — each
mirroring its session_id into Mcp-Param-Session-Id, on which HAProxy hashes ("Route by
session"), so a session's calls follow its replica out and back in — while SIGHUP makes the
script restart every replica in turn (each drains, exits 0 and comes back on its port before the
next goes). No call may fail, and every session must hold exactly the edits its client sent, once
each, in send order.

The same stream again while one replica is killed with SIGKILL: only calls in flight on it may
fail, and each, sent again with its idempotency_key, applies exactly once. Every edit draws a dot
of its own, so the final image shows each edit's effect and the history shows it happened once.

Each client edits until the roll (or kill) is done and then a few more times (at most MAX_EDITS;
on a 2-core machine that is some tens of edits per client during the roll, not hundreds).

Route by session, measured on the replicas' own /metrics: every call of one session lands on one
replica, whose image cache then serves the session's reads; calls without the header go
round-robin."""
import os
import re
import signal
import threading
import time
import unittest

from replica_support import CallFailed, ModernClient, sample, scrape_metrics, tool_calls
from test_cluster_script import replica_ports, start_cluster
from tools_support import pngio

CLIENTS = 5
MAX_EDITS = 1500    # per client (the dot grid holds 1600)
AFTER_ROLL = 3      # edits each client makes once the roll is done
TEST_TIMEOUT = 150  # seconds
RETRIES = 20        # per call, in the kill test: the same call and key again


def dot_at(i):
    """Where edit i draws its 8×8 dot on the 512×512 image (40 per row, 12 px apart)."""
    return 4 + (i % 40) * 12, 4 + (i // 40) * 12


def prompt(i):
    """A local-backend edit of its own: the history shows which edit it was, the pixels that it
    was applied."""
    x, y = dot_at(i)
    return f"draw dot black at {x},{y}"



class Editor(threading.Thread):
    """One client: a session of its own, edited again and again until told to finish."""

    def __init__(self, port, index, roll_done, retries=0):
        super().__init__(daemon=True)
        self.client = ModernClient(port)
        self.index = index
        self.session = f"roll-{index}"
        self.roll_done = roll_done
        self.retries = retries  # attempts after a failed one, with the same idempotency_key
        self.sent = []       # prompts of the edits answered, in send order
        self.failures = []   # what went wrong, per call that failed for good
        self.retried = []    # what went wrong on an attempt that was then sent again
        self.calls_retried = 0  # calls that needed more than one attempt
        self.repeats = 0     # answers that were repeats of an attempt already applied
        self.during_roll = 0

    def attempt(self, name, arguments):
        """The structuredContent, or (None, why) when the call failed."""
        try:
            response = self.client.call_tool(name, arguments)
        except CallFailed as e:
            return None, f"{name}: {e}"
        result = response.get("result", {})
        if "error" in response or result.get("isError"):
            return None, f"{name}: {response}"
        return result["structuredContent"], None

    def call(self, name, arguments):
        for attempt in range(self.retries + 1):
            got, why = self.attempt(name, arguments)
            if got is not None:
                self.repeats += bool(got.get("repeated"))
                return got
            if attempt == self.retries:
                break
            self.calls_retried += attempt == 0
            self.retried.append(why)
            time.sleep(0.2)  # back off before the next attempt, as a client would
        self.failures.append(why)
        return None

    def run(self):
        self.call("generate_image", {"session_id": self.session, "prompt": "solid white",
                                     "image_size": "512", "inline": "none",
                                     "idempotency_key": f"{self.session}-g"})
        after = 0
        while len(self.sent) < MAX_EDITS and after < AFTER_ROLL and not self.failures:
            done_before = self.roll_done.is_set()
            text = prompt(len(self.sent))
            got = self.call("edit_image", {"session_id": self.session, "prompt": text,
                                           "inline": "none",
                                           "idempotency_key": f"{self.session}-e{len(self.sent)}"})
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

    def missing_dots(self):
        """The edits whose dot the session's current image lacks."""
        with open(self.call("get_image", {"session_id": self.session, "inline": "none"})["path"],
                  "rb") as f:
            image = pngio.decode_png(f.read())
        return [i for i in range(len(self.sent))
                if pngio.pixel(image, dot_at(i)[0] + 4, dot_at(i)[1] + 4)[:3] != (0, 0, 0)]

    def check(self, test):
        """Every edit sent is in the history exactly once, in send order, chained, and drawn."""
        history = self.history()
        test.assertEqual([v for v, _, _ in history], list(range(1, len(self.sent) + 2)),
                         f"session {self.session}: lost or duplicated versions")
        test.assertEqual([p for _, _, p in history[1:]], self.sent,
                         f"session {self.session}: not in send order")
        test.assertEqual([parent for _, parent, _ in history[1:]],
                         list(range(1, len(self.sent) + 1)))
        test.assertEqual(self.missing_dots(), [], f"session {self.session}")


def watchdog(test):
    """Fails `test` (rather than hanging) after TEST_TIMEOUT seconds."""
    def on_alarm(*_):
        raise TimeoutError(f"test exceeded {TEST_TIMEOUT} s")
    signal.signal(signal.SIGALRM, on_alarm)
    signal.alarm(TEST_TIMEOUT)
    test.addCleanup(signal.alarm, 0)


class RollingRestartTest(unittest.TestCase):
    def setUp(self):
        watchdog(self)

    def start_editors(self, port, roll_done, retries=0):
        editors = [Editor(port, i, roll_done, retries) for i in range(CLIENTS)]
        for e in editors:
            e.start()
        # Every client is editing before the roll (or kill) starts.
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and not all(e.sent or e.failures for e in editors):
            time.sleep(0.05)
        return editors

    def start_cluster(self):
        return start_cluster(self, ["--backend", "local", "--max-versions", "0"])

    def test_rolling_restart_under_load_fails_no_call(self):
        proc, stderr, port = self.start_cluster()
        roll_done = threading.Event()
        editors = self.start_editors(port, roll_done)
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
        self.assertEqual([e.repeats for e in editors], [0] * CLIENTS)
        for e in editors:
            e.check(self)
        print(f"edits per client during the roll: {[e.during_roll for e in editors]}, "
              f"in all: {[len(e.sent) for e in editors]}")
        proc.send_signal(signal.SIGTERM)
        self.assertEqual(proc.wait(timeout=60), 0, stderr.text(30))

    def test_a_killed_replica_fails_only_its_calls_and_their_retries_apply_once(self):
        proc, stderr, port = self.start_cluster()
        pid = stderr.wait_for(
            lambda lines: next((int(m.group(1)) for l in lines
                                for m in [re.search(r"replica 2: pid (\d+)", l)] if m), None))
        self.assertIsNotNone(pid, stderr.text(30))
        kill_done = threading.Event()
        editors = self.start_editors(port, kill_done, retries=RETRIES)
        os.kill(pid, signal.SIGKILL)
        self.assertTrue(stderr.wait_for(
            lambda lines: any("replica 2 exited" in l for l in lines)), stderr.text(30))
        kill_done.set()
        for e in editors:
            e.join(60)
        self.assertEqual([f for e in editors for f in e.failures], [], stderr.text(80))
        # Only calls in flight on the killed replica (at most one per client) failed; HAProxy
        # sent the rest elsewhere.
        self.assertTrue(all(e.calls_retried <= 1 for e in editors),
                        [e.retried for e in editors])
        for e in editors:
            e.check(self)
        print(f"calls sent again after the kill: {sum(e.calls_retried for e in editors)}; "
              f"answered as repeats: {sum(e.repeats for e in editors)}; "
              f"edits: {[len(e.sent) for e in editors]}")


class SessionRoutingTest(unittest.TestCase):
    """scripts/cluster's HAProxy hashes Mcp-Param-Session-Id: one session, one replica."""

    EDITS = 6

    def setUp(self):
        watchdog(self)
        _, stderr, self.port = start_cluster(self, ["--backend", "local"])
        self.replicas = stderr.wait_for(replica_ports)
        self.assertIsNotNone(self.replicas, stderr.text())

    def counts(self, tool):
        """Per replica: (tools/call of `tool` answered, image cache hits)."""
        out = {}
        for index, port in self.replicas.items():
            samples = scrape_metrics(port)
            out[index] = (tool_calls(samples, tool),
                          sample(samples, "imgmcp_image_cache_requests_total", result="hit"))
        return out

    def test_a_sessions_calls_go_to_one_replica_whose_cache_they_hit(self):
        client = ModernClient(self.port)
        for session in ("route-a", "route-b", "route-c", "route-d"):
            before = self.counts("edit_image")
            client.call_tool("generate_image", {"session_id": session, "prompt": "solid white",
                                                "image_size": "512", "inline": "none"})
            for i in range(self.EDITS):
                answer = client.call_tool("edit_image", {"session_id": session,
                                                         "prompt": f"draw dot black at {i},4",
                                                         "inline": "none"})
                self.assertFalse(answer["result"].get("isError"), answer)
            after = self.counts("edit_image")
            edits = {i: after[i][0] - before[i][0] for i in self.replicas}
            hits = {i: after[i][1] - before[i][1] for i in self.replicas}
            self.assertEqual(sorted(edits.values()), [0, 0, self.EDITS], (session, edits))
            home = next(i for i, n in edits.items() if n)
            # Each edit read the version the one before it committed on the same replica.
            self.assertGreaterEqual(hits[home], self.EDITS, (session, hits))

    def test_calls_without_the_header_go_round_robin(self):
        client = ModernClient(self.port)
        before = self.counts("generate_image")
        for _ in range(6):  # no session_id, so no header: a session is minted per call
            answer = client.call_tool("generate_image", {"prompt": "solid white",
                                                         "image_size": "512", "inline": "none"})
            self.assertFalse(answer["result"].get("isError"), answer)
        after = self.counts("generate_image")
        spread = [after[i][0] - before[i][0] for i in self.replicas]
        self.assertEqual(sum(spread), 6)
        self.assertGreaterEqual(sum(1 for n in spread if n), 2, spread)


if __name__ == "__main__":
    unittest.main()
