"""Resource limits of the Streamable HTTP transport against the real binary: half-open
and idle connections cannot starve real clients (token or not), a request head has a total
deadline, the body cap holds for chunked and length-less bodies and refuses an oversized
Content-Length before reading the body, a port in use is an error, and a full session table
evicts the longest-idle session instead of locking clients out.

Raw sockets where http.client would hide what is measured; every socket is closed on every path.
"""
import concurrent.futures
import http.client
import json
import os
import re
import select
import socket
import subprocess
import threading
import time
import unittest

from docs_support import assert_listed, names_of_tests
from test_http import ACCEPT_BOTH, LATEST, HttpServer, SseReader, error_of
from tools_support import under_sanitizer

CAP = 96 << 20          # the HTTP body limit (bytes)
WORKERS = 128           # the server's worker threads (--http default)
HALF_OPEN = 300         # more than that
ANSWER_WITHIN = 5.0     # a real client's request, while the attack is on (seconds)
TOKEN = "limits-token-5b1e"


def rss_peak_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    raise AssertionError("no VmHWM")


def half_open(port, head=b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n"):
    """A connection that sends part of a request head and then nothing."""
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    s.sendall(head)
    return s


def closed_within(sock, seconds):
    """True when the server closes (or answers and closes) `sock` within `seconds`."""
    sock.settimeout(seconds)
    deadline = time.monotonic() + seconds
    try:
        while time.monotonic() < deadline:
            data = sock.recv(65536)
            if not data:
                return True
    except (ConnectionResetError, BrokenPipeError):
        return True
    except socket.timeout:
        return False
    return False


def initialize_body():
    return {"jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {"protocolVersion": LATEST, "capabilities": {},
                       "clientInfo": {"name": "test_http_limits", "version": "1"}}}


class RealClient:
    """initialize + pings with a short timeout, as a client that must not be starved."""

    def __init__(self, server, token=None):
        self.server = server
        self.headers = {"Authorization": "Bearer " + token} if token else {}

    def post(self, body, session=None):
        conn = http.client.HTTPConnection("127.0.0.1", self.server.port, timeout=ANSWER_WITHIN)
        try:
            h = {"Host": "127.0.0.1:%d" % self.server.port, "Content-Type": "application/json",
                 "Accept": ACCEPT_BOTH, **self.headers}
            if session:
                h["Mcp-Session-Id"] = session
            conn.request("POST", "/mcp", body=json.dumps(body).encode(), headers=h)
            resp = conn.getresponse()
            return resp.status, resp.getheader("Mcp-Session-Id"), resp.read()
        finally:
            conn.close()

    def round_trips(self, n):
        """n pings in a fresh session; returns the slowest answer's time."""
        started = time.monotonic()
        status, session, body = self.post(initialize_body())
        assert status == 200, (status, body)
        slowest = time.monotonic() - started
        for i in range(n):
            started = time.monotonic()
            status, _, body = self.post({"jsonrpc": "2.0", "id": i + 1, "method": "ping"}, session)
            assert status == 200, (status, body)
            slowest = max(slowest, time.monotonic() - started)
        return slowest


class HalfOpenConnections(unittest.TestCase):
    def starve_attempt(self, server, token):
        socks = []
        self.addCleanup(lambda: [s.close() for s in socks])
        for _ in range(HALF_OPEN):
            socks.append(half_open(server.port))
        # Every half-open connection is in the server's accept queue before the real client's.
        slowest = RealClient(server, token).round_trips(5)
        self.assertLess(slowest, ANSWER_WITHIN)
        # They are all still open (nothing else evicted them): the attack was real.
        alive = sum(1 for s in socks if not closed_within(s, 0.001))
        self.assertGreater(alive, HALF_OPEN // 2)

    def test_half_open_connections_do_not_starve_a_client_without_token(self):
        server = HttpServer()
        self.addCleanup(server.stop)
        self.starve_attempt(server, None)

    def test_half_open_connections_do_not_starve_a_client_with_the_token(self):
        server = HttpServer("--auth-token", TOKEN)
        self.addCleanup(server.stop)
        self.starve_attempt(server, TOKEN)

    def test_idle_keep_alive_connections_do_not_hold_workers(self):
        server = HttpServer()
        self.addCleanup(server.stop)
        conns = []
        answered = threading.Semaphore(0)
        self.addCleanup(lambda: [c.close() for c in conns])

        def one():
            c = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
            conns.append(c)
            c.request("GET", "/healthz")
            resp = c.getresponse()
            resp.read()
            answered.release()  # and the connection stays open, idle

        pool = concurrent.futures.ThreadPoolExecutor(HALF_OPEN)
        self.addCleanup(pool.shutdown)
        for _ in range(HALF_OPEN):
            pool.submit(one)
        for _ in range(WORKERS):  # as many as the server has worker threads
            self.assertTrue(answered.acquire(timeout=30))
        # An idle keep-alive connection used to hold a worker for the keep-alive timeout (2 s):
        # with 128 of them idle and the rest queued, the next client waited several rounds.
        self.assertLess(RealClient(server).round_trips(3), 1.5)


class HeaderDeadline(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.server = HttpServer("--http-header-timeout", "1")

    @classmethod
    def tearDownClass(cls):
        cls.server.stop()

    def test_a_partial_head_is_closed_at_the_deadline(self):
        s = half_open(self.server.port)
        self.addCleanup(s.close)
        started = time.monotonic()
        self.assertTrue(closed_within(s, 6.0), "half-open connection still open")
        self.assertGreater(time.monotonic() - started, 0.5)

    def test_a_connection_that_sends_nothing_is_closed_at_the_deadline(self):
        s = socket.create_connection(("127.0.0.1", self.server.port), timeout=10)
        self.addCleanup(s.close)
        self.assertTrue(closed_within(s, 6.0))

    def test_the_deadline_is_total_not_per_read(self):
        s = half_open(self.server.port, b"POST /mcp HTTP/1.1\r\nX-Slow: ")
        self.addCleanup(s.close)
        started = time.monotonic()
        closed = False
        while time.monotonic() - started < 6.0:
            try:
                s.sendall(b"a")  # one byte every 100 ms keeps every single read short
            except (BrokenPipeError, ConnectionResetError):
                closed = True
                break
            r, _, _ = select.select([s], [], [], 0.1)
            if r:
                try:
                    data = s.recv(65536)
                except ConnectionResetError:
                    data = b""
                if not data or data.startswith(b"HTTP/1.1 408"):
                    closed = True
                    break
        self.assertTrue(closed, "a trickled head kept the connection open past the deadline")

    def test_a_complete_request_is_still_answered(self):
        status, _, _ = RealClient(self.server).post(initialize_body())
        self.assertEqual(status, 200)


def raw_request(port, head_lines, timeout=20):
    s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    s.sendall(("\r\n".join(head_lines) + "\r\n\r\n").encode())
    return s


def read_status(sock, timeout=20):
    sock.settimeout(timeout)
    data = b""
    while b"\r\n" not in data:
        chunk = sock.recv(4096)
        if not chunk:
            break
        data += chunk
    m = re.match(rb"HTTP/1\.[01] (\d{3})", data)
    return (int(m.group(1)) if m else None), data


def stream_until_answered(sock, chunk_of, limit_bytes):
    """Sends chunk_of(i) until the server answers or closes; returns (bytes sent, answered)."""
    sent = 0
    i = 0
    while sent < limit_bytes:
        r, _, _ = select.select([sock], [], [], 0)
        if r:
            return sent, True
        try:
            data = chunk_of(i)
            sock.sendall(data)
        except (BrokenPipeError, ConnectionResetError):
            return sent, True
        sent += len(data)
        i += 1
    return sent, False


class BodyLimits(unittest.TestCase):
    def setUp(self):
        # One server per test: each memory figure is that test's own peak.
        self.server = HttpServer()
        self.addCleanup(self.server.stop)
        self.session = self.server.initialize()

    def head(self, method="POST", path="/mcp", extra=()):
        return ["%s %s HTTP/1.1" % (method, path), "Host: 127.0.0.1:%d" % self.server.port,
                "Content-Type: application/json", "Accept: " + ACCEPT_BOTH,
                "Mcp-Session-Id: " + self.session, *extra]

    def over_the_cap(self, method, path, framing):
        """Streams 3x the cap; the server must stop reading near the cap and answer."""
        chunk = b" " * (1 << 20)
        if framing == "chunked":
            extra = ["Transfer-Encoding: chunked"]
            piece = b"%x\r\n" % len(chunk) + chunk + b"\r\n"
        else:  # no length: the body ends when the client closes
            extra = []
            piece = chunk
        s = raw_request(self.server.port, self.head(method, path, extra))
        self.addCleanup(s.close)
        sent, answered = stream_until_answered(s, lambda i: piece, 3 * CAP)
        self.assertTrue(answered, "the server read %d MiB and kept reading" % (sent >> 20))
        # Socket buffers hold a few MiB more than the server has read.
        self.assertLess(sent, CAP + (32 << 20))
        status, data = read_status(s)
        return status, data

    def test_chunked_post_over_the_cap_is_413(self):
        status, data = self.over_the_cap("POST", "/mcp", "chunked")
        self.assertEqual(status, 413, data[:200])
        self.assertIn(b"Connection: close", data)
        if not under_sanitizer():
            # 12.7 MB → 1.29 GB before the cap held for chunked bodies.
            self.assertLess(rss_peak_kib(self.server.proc.pid), (CAP + (64 << 20)) >> 10)
        # The server is fine afterwards.
        status, _, _ = self.server.request("POST", {"jsonrpc": "2.0", "id": 1, "method": "ping"},
                                           session=self.session)
        self.assertEqual(status, 200)

    def test_chunked_bodies_on_other_routes_are_bounded_too(self):
        # Whatever the route answers (DELETE ignores a body without Content-Length and ends the
        # session: 200), the server stops reading near the cap and answers.
        for method, path in (("PUT", "/mcp"), ("POST", "/elsewhere"), ("DELETE", "/mcp")):
            with self.subTest(method=method, path=path):
                status, data = self.over_the_cap(method, path, "chunked")
                self.assertIsNotNone(status, data[:200])

    def test_post_without_length_over_the_cap_is_refused(self):
        status, data = self.over_the_cap("POST", "/mcp", "none")
        self.assertEqual(status, 413, data[:200])

    def test_content_length_over_the_cap_is_refused_before_the_body(self):
        s = raw_request(self.server.port, self.head(extra=["Content-Length: %d" % (CAP + 1)]))
        self.addCleanup(s.close)
        started = time.monotonic()
        status, data = read_status(s, timeout=10)
        self.assertEqual(status, 413, data[:200])
        self.assertLess(time.monotonic() - started, 5.0)
        body = data.split(b"\r\n\r\n", 1)[1] if b"\r\n\r\n" in data else b""
        while len(body) < 20:
            more = s.recv(4096)
            if not more:
                break
            body += more
        self.assertEqual(json.loads(body)["error"]["code"], -32000)

    def test_a_chunked_body_under_the_cap_still_works(self):
        payload = json.dumps({"jsonrpc": "2.0", "id": 5, "method": "ping"}).encode()
        s = raw_request(self.server.port, self.head(extra=["Transfer-Encoding: chunked"]))
        self.addCleanup(s.close)
        s.sendall(b"%x\r\n" % 3 + payload[:3] + b"\r\n" + b"%x\r\n" % (len(payload) - 3)
                  + payload[3:] + b"\r\n0\r\n\r\n")
        status, data = read_status(s)
        self.assertEqual(status, 200, data[:300])


class UnreadBodies(unittest.TestCase):
    """A handler that answers without reading the body (401 here) must not leave that body to
    be read as the next request on the connection (a browser retried with the token and got
    400)."""

    def setUp(self):
        self.server = HttpServer("--auth-token", TOKEN)
        self.addCleanup(self.server.stop)

    def test_the_next_request_on_the_connection_is_answered(self):
        for size in (100, 200 << 10):
            with self.subTest(size=size):
                conn = http.client.HTTPConnection("127.0.0.1", self.server.port, timeout=20)
                self.addCleanup(conn.close)
                body = json.dumps(dict(initialize_body(), pad="x" * size)).encode()
                h = {"Host": "127.0.0.1:%d" % self.server.port,
                     "Content-Type": "application/json", "Accept": ACCEPT_BOTH}
                conn.request("POST", "/mcp", body=body, headers=h)
                resp = conn.getresponse()
                resp.read()
                self.assertEqual(resp.status, 401)
                h["Authorization"] = "Bearer " + TOKEN
                conn.request("POST", "/mcp", body=body, headers=h)
                resp = conn.getresponse()
                answer = resp.read()
                self.assertEqual(resp.status, 200, answer[:300])
                self.assertIn(b'"result"', answer)

    def test_an_unread_chunked_body_ends_the_connection(self):
        s = raw_request(self.server.port, [
            "POST /mcp HTTP/1.1", "Host: 127.0.0.1:%d" % self.server.port,
            "Content-Type: application/json", "Accept: " + ACCEPT_BOTH,
            "Transfer-Encoding: chunked"])
        self.addCleanup(s.close)
        s.sendall(b"5\r\nhello\r\n0\r\n\r\n")
        status, data = read_status(s)
        self.assertEqual(status, 401)
        self.assertTrue(closed_within(s, 10.0), "the connection stayed open after an unread body")


class PortInUse(unittest.TestCase):
    def test_a_second_server_on_the_same_port_exits_non_zero(self):
        first = HttpServer()
        self.addCleanup(first.stop)
        binary = os.environ["IMGMCP_BIN"]
        env = {k: v for k, v in os.environ.items() if k != "GEMINI_API_KEY"}
        proc = subprocess.run(
            [binary, "--http", "127.0.0.1:%d" % first.port, "--data-dir", first.data_dir],
            stdin=subprocess.DEVNULL, capture_output=True, timeout=30, env=env)
        self.assertNotEqual(proc.returncode, 0)
        self.assertIn("address already in use", proc.stderr.decode().lower())
        self.assertNotIn(b"listening on", proc.stderr)


class SessionTableBound(unittest.TestCase):
    """A full table evicts the longest-idle session (its client gets 404 and initializes again,
    as the spec says), so a process that opens sessions in a loop cannot lock others out."""

    MAX = 8

    def test_a_full_table_evicts_the_longest_idle_session(self):
        server = HttpServer("--http-max-sessions", str(self.MAX))
        self.addCleanup(server.stop)
        ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
        sessions = [server.initialize() for _ in range(self.MAX)]
        # The first one is used again: it is no longer the longest idle.
        self.assertEqual(server.request("POST", ping, session=sessions[0])[0], 200)
        for _ in range(3):
            sessions.append(server.initialize())  # 503 "too many sessions" before
        statuses = [server.request("POST", ping, session=s)[0] for s in sessions]
        self.assertEqual(statuses[0], 200)
        self.assertEqual(statuses[1:4], [404, 404, 404])
        self.assertEqual(statuses[4:], [200] * (len(sessions) - 4))

    def test_sessions_with_an_open_stream_are_not_evicted(self):
        server = HttpServer("--http-max-sessions", "2")
        self.addCleanup(server.stop)
        streams = []
        self.addCleanup(lambda: [c.close() for _, c in streams])
        for _ in range(2):
            session = server.initialize()
            resp, conn = server.open("GET", session=session)
            self.assertEqual(resp.status, 200)
            SseReader(resp).next_event()
            streams.append((session, conn))
        status, _, body = server.request("POST", initialize_body())
        self.assertEqual(status, 503, body)
        self.assertIn("too many sessions", error_of(body)["message"])


class CatalogueDocs(unittest.TestCase):
    def test_the_docs_list_every_test_here(self):
        assert_listed(self, names_of_tests(HalfOpenConnections, HeaderDeadline, BodyLimits,
                                       UnreadBodies, PortInUse, SessionTableBound))


if __name__ == "__main__":
    unittest.main()
