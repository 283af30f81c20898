"""Several real imgmcp replicas on one real PostgreSQL: ordering, crashes, restarts,
notifications. The cluster (tests/pg/pg_cluster.py) is made once for the module and removed on
every path; each test has its own database. Replicas speak legacy Streamable HTTP sessions, one
per replica per client.

R1  60 edits of one session sent round-robin to three replicas, each sent once the previous one
    holds its ticket (a progress notification or its answer), so the ticket order is known; the
    first edit's backend call (the Gemini fake) is held until all 60 are in line. The edits commit
    as versions 2..61 in exactly that order, each made from the one before, and the pixels of each
    version show exactly the squares drawn up to it. Then 20 sessions x 10 edits in parallel
    across the replicas.
R2  A replica is killed (SIGKILL) while it holds a session's turn (its backend call is held at the
    Gemini fake's gate, never released), three times during a stream of edits on the others:
    nothing commits while it holds the turn, the edits queued behind it go on within seconds of
    the kill, and every version a client was told about is readable afterwards with its sha256,
    on every replica.
R3  PostgreSQL restarts (immediate mode, like a crash) during a stream of edits: calls fail with a
    clear error or succeed, nothing acknowledged is lost, the service comes back by itself.
R4  A commit on replica A reaches a resource subscriber connected to replica B.
"""
import concurrent.futures
import itertools
import subprocess
import threading
import time
import unittest

import replica_support
from fake_gemini_support import TEST_KEY, FakeGemini
from mcp_harness import ServerProcess
from replica_support import (GRID, CallFailed, LegacyClient, ModernClient, Replica,
                             check_ordered_edits, draw_prompt, pg_cluster, read_version_file,
                             squares_drawn, structured)

CLUSTER = pg_cluster.SharedCluster()
setUpModule, tearDownModule = CLUSTER.start, CLUSTER.close
_db_names = itertools.count(1)


def new_database():
    return CLUSTER.create_database(f"replicas{next(_db_names)}")


class Cluster:
    """n replicas on a fresh database; closed on every path."""

    def __init__(self, test, n, url=None, **kwargs):
        self.url = url or new_database()
        self.replicas = []
        for i in range(n):
            self.add(test, **kwargs)

    def add(self, test, *args, name=None, env=None, backend="local"):
        r = Replica(self.url, *args, env=env, name=name or f"replica{len(self.replicas)}",
                    backend=backend)
        test.addCleanup(r.close)
        self.replicas.append(r)
        return r


def start_fake(test):
    """A Gemini fake for this test, closed after the replicas that call it."""
    fake = FakeGemini()
    test.addCleanup(fake.close)
    return fake


def gemini_env(fake):
    return {"GEMINI_API_KEY": TEST_KEY, "GEMINI_BASE_URL": fake.base_url}


class OrderedEditsTest(unittest.TestCase):
    def test_r1_sixty_edits_over_three_replicas_commit_once_each_in_ticket_order(self):
        # Stateless 2026-07-28 requests, round-robin over the replicas: no session ties a client
        # to one of them. (Legacy sessions: the parallel test below, R2 and R3.)
        fake = start_fake(self)
        cluster = Cluster(self, 3, backend="gemini", env=gemini_env(fake))
        check_ordered_edits(self, [r.port for r in cluster.replicas], "r1", 60, fake,
                            client=ModernClient)

    def test_r1_twenty_sessions_ten_edits_each_in_parallel_across_replicas(self):
        cluster = Cluster(self, 3)

        def session(s):
            sid = f"par{s}"
            clients = [LegacyClient(r.port) for r in cluster.replicas]
            v = structured(clients[s % 3].call_tool("generate_image", {
                "session_id": sid, "prompt": "solid white", "inline": "none"}))
            self.assertEqual(v["version"], 1)
            for e in range(10):
                got = structured(clients[(s + e + 1) % 3].call_tool("edit_image", {
                    "session_id": sid, "prompt": draw_prompt(e), "inline": "none"}))
                self.assertEqual((got["version"], got.get("parent_version")), (e + 2, e + 1))
            last = structured(clients[s % 3].call_tool("get_image", {
                "session_id": sid, "inline": "none"}))
            self.assertEqual([h["version"] for h in last["history"]], list(range(1, 12)))
            self.assertEqual(squares_drawn(read_version_file(last)), set(range(10)))

        with concurrent.futures.ThreadPoolExecutor(max_workers=20) as pool:
            for f in [pool.submit(session, s) for s in range(20)]:
                f.result(timeout=300)


class Stream:
    """Edits of one session sent one after another by each of `clients` (a thread each) until
    stopped; records every acknowledged version and every failure, in the order they came."""

    def __init__(self, clients, session_id):
        self.changed = threading.Condition()  # guards everything below; notified on each answer
        self.acked = {}         # version -> sha256
        self.acked_at = []      # (monotonic time, version), in the order the answers came
        self.errors = []        # isError texts
        self.failed_calls = []  # no answer at all
        self.stop = threading.Event()
        self.threads = [threading.Thread(target=self._run, args=(c, session_id, n), daemon=True)
                        for n, c in enumerate(clients)]
        for t in self.threads:
            t.start()

    def _run(self, client, session_id, n):
        for i in itertools.count():
            if self.stop.is_set():
                return
            try:
                response = client.call_tool("edit_image", {
                    "session_id": session_id, "prompt": draw_prompt((i * 7 + n) % GRID),
                    "inline": "none"})
            except CallFailed as e:
                with self.changed:
                    self.failed_calls.append(str(e))
                    self.changed.notify_all()
                continue
            result = response.get("result", {})
            with self.changed:
                if result.get("isError"):
                    self.errors.append(result["content"][0]["text"])
                else:
                    s = result["structuredContent"]
                    assert s["version"] not in self.acked, f"version {s['version']} told twice"
                    self.acked[s["version"]] = s["sha256"]
                    self.acked_at.append((time.monotonic(), s["version"]))
                self.changed.notify_all()

    def acks_after(self, t):
        with self.changed:
            return [v for when, v in self.acked_at if when > t]

    def wait_acks_after(self, t, count, timeout):
        """True once `count` answers came after monotonic time t; False after `timeout` s."""
        with self.changed:
            return self.changed.wait_for(lambda: len(self.acks_after(t)) >= count, timeout)

    def wait_version_above(self, version, timeout):
        """True once a version above `version` was acknowledged; False after `timeout` s."""
        with self.changed:
            return self.changed.wait_for(lambda: any(v > version for v in self.acked), timeout)

    def finish(self):
        self.stop.set()
        for t in self.threads:
            t.join(timeout=120)


def check_readable(test, replicas, session_id, acked):
    """Every acknowledged version is readable on every replica, with its sha256 (also the bytes
    of the replica's local copy)."""
    for replica in replicas:
        client = LegacyClient(replica.port)
        history = structured(client.call_tool("get_image", {"session_id": session_id,
                                                            "inline": "none",
                                                            "history_limit": 100}))["history"]
        have = {h["version"] for h in history}
        test.assertTrue(set(acked) <= have, f"acknowledged but gone: {set(acked) - have}")
        for version, sha in sorted(acked.items()):
            got = structured(client.call_tool("get_image", {
                "session_id": session_id, "version": version, "inline": "none",
                "include_history": False}))
            test.assertEqual(got["sha256"], sha, f"version {version} on {replica.name}")
            read_version_file(got)


class CrashTest(unittest.TestCase):
    def test_r2_a_killed_replica_releases_its_turn_and_loses_nothing_told(self):
        fake = start_fake(self)
        cluster = Cluster(self, 2)
        a, b = cluster.replicas
        structured(LegacyClient(a.port).call_tool("generate_image", {
            "session_id": "r2", "prompt": "solid white", "inline": "none"}))
        stream = Stream([LegacyClient(a.port), LegacyClient(b.port)], "r2")
        try:
            for round_ in range(3):
                victim = cluster.add(self, name=f"victim{round_}", backend="gemini",
                                     env=gemini_env(fake))
                vclient = LegacyClient(victim.port)
                # The victim's backend call waits at a gate that is never opened: it holds the
                # session's turn until it dies.
                fake.script({"hold": f"victim {round_}"})
                outcome = []
                t = threading.Thread(target=lambda: outcome.append(self._edit_or_fail(vclient)),
                                     daemon=True)
                t.start()
                fake.wait(requests=round_ + 1, held=1, timeout=60)  # the victim holds the turn
                # Every commit so far is at most this version (answers of earlier commits may
                # still be on their way); nothing commits past it while the victim lives — a
                # second's look, in which the stream's edits wait behind the victim.
                held = structured(LegacyClient(a.port).call_tool("get_image", {
                    "session_id": "r2", "inline": "none", "include_history": False}))["version"]
                self.assertFalse(stream.wait_version_above(held, timeout=1.0),
                                 "edits committed while another replica held the turn")
                victim.kill()
                killed_at = time.monotonic()
                self.assertTrue(stream.wait_acks_after(killed_at, 2, timeout=20),
                                f"round {round_}: the session did not go on after the kill")
                resumed = min(when for when, _ in stream.acked_at if when > killed_at)
                self.assertLess(resumed - killed_at, 10.0, "the turn was not released promptly")
                t.join(timeout=30)
                self.assertEqual(outcome, ["no answer"], "the killed replica answered")
                fake.release(f"victim {round_}")  # frees the fake's worker; the caller is gone
        finally:
            stream.finish()
        self.assertEqual(stream.errors, [])
        self.assertEqual(stream.failed_calls, [])
        self.assertGreaterEqual(len(stream.acked), 6)
        check_readable(self, [a, b], "r2", stream.acked)

    def _edit_or_fail(self, client):
        try:
            response = client.call_tool("edit_image", {
                "session_id": "r2", "prompt": draw_prompt(GRID), "inline": "none"})
            return response
        except CallFailed:
            return "no answer"

    def test_r3_postgresql_restarting_mid_stream_loses_nothing_told_and_recovers(self):
        cluster = Cluster(self, 2)
        a, b = cluster.replicas
        structured(LegacyClient(a.port).call_tool("generate_image", {
            "session_id": "r3", "prompt": "solid white", "inline": "none"}))
        stream = Stream([LegacyClient(a.port), LegacyClient(b.port)], "r3")
        try:
            self.assertTrue(stream.wait_acks_after(0, 6, timeout=60))
            CLUSTER.restart("immediate")  # a crash: the server goes away mid-commit
            restarted_at = time.monotonic()
            self.assertTrue(stream.wait_acks_after(restarted_at, 6, timeout=60),
                            "the service did not come back after PostgreSQL restarted:\n"
                            + a.stderr[-3000:])
        finally:
            stream.finish()
        self.assertTrue(a.alive() and b.alive())
        self.assertEqual(stream.failed_calls, [])  # every call got an answer
        for text in stream.errors:
            self.assertIn("PostgreSQL", text)
        check_readable(self, [a, b], "r3", stream.acked)


class NotificationTest(unittest.TestCase):
    def test_r4_a_commit_on_one_replica_reaches_a_subscriber_on_another(self):
        cluster = Cluster(self, 2)
        a, b = cluster.replicas
        writer = LegacyClient(a.port)
        structured(writer.call_tool("generate_image", {
            "session_id": "r4", "prompt": "solid white", "inline": "none"}))
        reader = LegacyClient(b.port)
        reply = reader.call("resources/subscribe", {"uri": "imgmcp://sessions/r4"})
        self.assertIn("result", reply)
        listener = reader.listen()
        self.addCleanup(listener.close)
        structured(writer.call_tool("edit_image", {
            "session_id": "r4", "prompt": draw_prompt(0), "inline": "none"}))
        listener.wait_for(lambda m: m.get("method") == "notifications/resources/updated"
                          and m["params"]["uri"] == "imgmcp://sessions/r4")
        structured(writer.call_tool("generate_image", {
            "session_id": "r4-new", "prompt": "solid red", "inline": "none"}))
        listener.wait_for(lambda m: m.get("method") == "notifications/resources/list_changed")
        # What B's client then reads is what A committed.
        got = structured(reader.call_tool("get_image", {"session_id": "r4", "inline": "none"}))
        self.assertEqual(got["version"], 2)


class StoreFlagTest(unittest.TestCase):
    def test_store_takes_sqlite_or_a_postgresql_url_and_never_echoes_it(self):
        r = subprocess.run([replica_support.binary_path(), "--store", "mysql://u:s3cret@h/db",
                            "--self-check"], capture_output=True, timeout=60,
                           stdin=subprocess.DEVNULL)
        self.assertEqual(r.returncode, 2)
        self.assertIn(b"--store", r.stderr)
        self.assertIn(b"postgresql://", r.stderr)
        self.assertNotIn(b"s3cret", r.stderr)

    def test_an_unreachable_database_is_a_clear_error_and_the_server_stays_up(self):
        url = "postgresql://imgmcp:s3cret-pw@127.0.0.1:1/nowhere?connect_timeout=2"
        with ServerProcess(args=["--backend", "local"], env={"IMGMCP_STORE": url}) as server:
            server.initialize()
            response = server.call_tool("generate_image", {"prompt": "solid red",
                                                           "session_id": "s"}, timeout=60)
            text = response["result"]["content"][0]["text"]
            self.assertTrue(response["result"]["isError"])
            self.assertIn("PostgreSQL at 127.0.0.1:1/nowhere", text)
            self.assertEqual(server.request("ping")["result"], {})
            server.close_stdin()
            self.assertEqual(server.wait_exit(), 0)
        self.assertNotIn("s3cret-pw", server.stderr)

    def test_the_store_can_come_from_the_environment(self):
        url = new_database()
        with ServerProcess(args=["--backend", "local"], env={"IMGMCP_STORE": url}) as one:
            one.initialize()
            structured(one.call_tool("generate_image", {"prompt": "solid red",
                                                        "session_id": "env"}))
            self.assertIn("PostgreSQL at 127.0.0.1:", one.stderr)
        with ServerProcess(args=["--backend", "local"], env={"IMGMCP_STORE": url}) as two:
            two.initialize()  # another process, another data dir: the same session
            got = structured(two.call_tool("get_image", {"session_id": "env", "inline": "none"}))
            self.assertEqual(got["version"], 1)
            self.assertTrue(got["path"].startswith(two.data_dir), got["path"])


if __name__ == "__main__":
    unittest.main()
