"""scripts/cluster as a user runs it: PostgreSQL, three replicas and HAProxy on loopback, one URL.
R1 (ordered edits, see test_replicas) runs once through HAProxy, whose round-robin spreads the
clients' sessions over the replicas; the replicas' backend is the Gemini fake (`-- --backend
gemini --gemini-base-url …`), which holds the first edit until all of them are in line. SIGTERM
then stops everything (no replica, HAProxy or PostgreSQL left listening, nothing left in the temp
dir)."""
import os
import re
import signal
import socket
import subprocess
import threading
import unittest

from fake_gemini_support import TEST_KEY, FakeGemini
from replica_support import check_ordered_edits

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
REPLICA = re.compile(r"replica (\d+): pid (\d+), http://127\.0\.0\.1:(\d+)/mcp")
WORK_DIR = re.compile(r"work dir (\S+)")
POSTGRES = re.compile(r"PostgreSQL postgresql://\S+@127\.0\.0\.1:(\d+)/\S+ \(data in (\S+),")


class Lines:
    """The script's stderr, read by a thread; waits for lines with a deadline (the replicas' log
    lines reach it through the script's pumps, some time after the event they tell of)."""

    def __init__(self, stream):
        self.lines = []
        self._changed = threading.Condition()
        threading.Thread(target=self._read, args=(stream,), daemon=True).start()

    def _read(self, stream):
        for line in stream:
            with self._changed:
                self.lines.append(line)
                self._changed.notify_all()

    def wait_for(self, predicate, timeout=30):
        """predicate(lines) → a true value, returned; None when the deadline passes first."""
        result = None

        def check():
            nonlocal result
            result = predicate(self.lines)
            return result

        with self._changed:
            self._changed.wait_for(check, timeout)
            return result or None

    def text(self, last=None):
        with self._changed:
            return "".join(self.lines[-last:] if last else self.lines)


def replica_ports(lines):
    found = {}
    for line in lines:
        m = REPLICA.search(line)
        if m:
            found[int(m.group(1))] = int(m.group(3))
    return found if len(found) == 3 else None


def sessions_started(lines, i):
    return [line for line in lines
            if line.startswith(f"[replica {i}]") and "session" in line and "started" in line]


def refuses(port):
    try:
        socket.create_connection(("127.0.0.1", port), timeout=2).close()
        return False
    except OSError:
        return True


def start_cluster(test, imgmcp_flags, env=None, replicas=3, script_flags=()):
    """scripts/cluster with `replicas` replicas given `imgmcp_flags` (and the script itself
    `script_flags`, e.g. --balance roundrobin); stopped at the test's cleanup (SIGTERM lets the
    script clean up, SIGKILL if it hangs). Returns (process, its stderr Lines, HAProxy's port)."""
    proc = subprocess.Popen([os.path.join(ROOT, "scripts", "cluster"), "--replicas",
                             str(replicas), *script_flags, "--", *imgmcp_flags],
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env)
    stderr = Lines(proc.stderr)

    def cleanup():
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        proc.stdout.close()
        proc.stderr.close()
    test.addCleanup(cleanup)
    url = proc.stdout.readline().strip()
    test.assertRegex(url, r"^http://127\.0\.0\.1:\d+/mcp$", stderr.text())
    return proc, stderr, int(url.split(":")[2].split("/")[0])


class ClusterScriptTest(unittest.TestCase):
    def test_r1_through_haproxy_then_everything_stops(self):
        fake = FakeGemini()
        self.addCleanup(fake.close)  # runs last: the cluster's replicas are its clients
        proc, stderr, port = start_cluster(
            self, ["--backend", "gemini", "--gemini-base-url", fake.base_url],
            env={**os.environ, "GEMINI_API_KEY": TEST_KEY})

        replicas = stderr.wait_for(replica_ports)
        self.assertIsNotNone(replicas, stderr.text())
        self.assertEqual(sorted(replicas), [1, 2, 3], stderr.text())
        # Clients that only know the one URL: HAProxy gives each new session a replica in turn.
        # The first edit is held at the fake until all 60 are in line behind it.
        check_ordered_edits(self, [port] * 3, "through-haproxy", 60, fake)
        self.assertTrue(all(r["api_key"] == TEST_KEY for r in fake.requests()))
        for i in replicas:
            self.assertTrue(stderr.wait_for(lambda lines: len(sessions_started(lines, i)) > 5),
                            f"replica {i} served (almost) no sessions:\n{stderr.text(60)}")

        pg = next(m for m in (POSTGRES.search(line) for line in stderr.lines) if m)
        proc.send_signal(signal.SIGTERM)
        self.assertEqual(proc.wait(timeout=60), 0, stderr.text(30))
        for p in [port, int(pg.group(1)), *replicas.values()]:
            self.assertTrue(refuses(p), f"port {p} still open after the cluster stopped")
        self.assertFalse(os.path.exists(pg.group(2)), "PostgreSQL's data was left behind")
        work = next(m for m in (WORK_DIR.search(line) for line in stderr.lines) if m)
        self.assertFalse(os.path.exists(work.group(1)), "the replicas' data dirs were left behind")


if __name__ == "__main__":
    unittest.main()
