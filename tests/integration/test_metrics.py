"""Prometheus metrics against the real binary (stdlib only): GET /metrics on the --http listener
behind the same Host/Origin and token checks as /mcp, the --metrics listener in stdio mode, the
per-tool call counts, a 429 storm from the Gemini fake in the retry counter, and a real Prometheus
(Debian's `prometheus`) scraping the server and answering a query with the calls made."""
import http.client
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import unittest
import urllib.parse

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from imgmcp_process import HttpProcess, binary_path, clean_env  # noqa: E402  (tests/support)
from fake_gemini_support import FakeGeminiTestCase  # noqa: E402
from mcp_harness import ServerProcess  # noqa: E402
from skips import require_tool  # noqa: E402  (tests/support)
from replica_support import LegacyClient  # noqa: E402
from tools_support import error_text, structured, wait_until  # noqa: E402

TIMEOUT = 20.0
TOKEN = "metrics-test-token"
METRICS_AT = re.compile(r"metrics at http://127\.0\.0\.1:(\d+)/metrics")
SAMPLE = re.compile(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$")
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')
# Prometheus's log lines: the port it listens on (asked for port 0), and that it serves.
PROMETHEUS_LISTENING = re.compile(r'msg="Listening on" address=127\.0\.0\.1:(\d+)')
PROMETHEUS_READY = 'msg="Server is ready to receive web requests."'


def parse_samples(text):
    """[(name, {label: value}, float)] of a text exposition."""
    samples = []
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        m = SAMPLE.match(line)
        if m is None:
            raise AssertionError(f"not a sample line: {line!r}")
        samples.append((m.group(1), dict(LABEL.findall(m.group(2) or "")), float(m.group(3))))
    return samples


def value(samples, name, **labels):
    """The sum of `name` over the samples whose labels include `labels`."""
    return sum(v for n, ls, v in samples
               if n == name and all(ls.get(k, "") == want for k, want in labels.items()))


def get(port, path="/metrics", headers=None):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=TIMEOUT)
    try:
        h = {"Host": f"127.0.0.1:{port}"}
        h.update(headers or {})
        conn.request("GET", path, headers=h)
        resp = conn.getresponse()
        return resp.status, resp.getheader("Content-Type") or "", resp.read().decode()
    finally:
        conn.close()


def metrics_port(server):
    """The --metrics listener's port, from the "metrics at" stderr line."""
    m = METRICS_AT.search(server.wait_for_stderr("/metrics", timeout=TIMEOUT))
    if m is None:
        raise AssertionError(f"no 'metrics at' line:\n{server.stderr}")
    return int(m.group(1))


def scrape(port, headers=None):
    status, content_type, body = get(port, headers=headers)
    if status != 200:
        raise AssertionError(f"/metrics answered {status}: {body}")
    if not content_type.startswith("text/plain"):
        raise AssertionError(f"/metrics Content-Type {content_type}")
    return parse_samples(body)


class TokenClient(LegacyClient):
    """A legacy-era client that sends the bearer token."""

    def _headers(self, method=None, params=None):
        h = super()._headers(method, params)
        h["Authorization"] = f"Bearer {TOKEN}"
        return h


def start_prometheus(test, ports, token=None):
    """A real Prometheus scraping 127.0.0.1:PORT/metrics for each port every second (with the
    bearer token when given), stopped and removed at the test's cleanup; returns its API port.
    It listens on port 0 and its log says which port it got and when it is ready."""
    work = tempfile.mkdtemp(prefix="imgmcp-prometheus-")
    test.addCleanup(shutil.rmtree, work, True)
    config = os.path.join(work, "prometheus.yml")
    targets = ", ".join(f"'127.0.0.1:{port}'" for port in ports)
    with open(config, "w") as f:
        f.write("global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n"
                "scrape_configs:\n  - job_name: imgmcp\n"
                + (f"    authorization:\n      credentials: {token}\n" if token else "")
                + f"    static_configs:\n      - targets: [{targets}]\n")
    proc = subprocess.Popen(
        [require_tool("prometheus"), f"--config.file={config}",
         f"--storage.tsdb.path={work}/data", "--web.listen-address=127.0.0.1:0"],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        env=clean_env())
    log, found, ready = [], {}, threading.Event()

    def read_log():  # until EOF: the pipe never fills
        for line in iter(proc.stderr.readline, b""):
            log.append(line.decode(errors="replace"))
            m = PROMETHEUS_LISTENING.search(log[-1])
            if m:
                found.setdefault("port", int(m.group(1)))
            if PROMETHEUS_READY in log[-1]:
                ready.set()
        ready.set()  # exited before it was ready
    reader = threading.Thread(target=read_log, daemon=True)
    reader.start()
    test.addCleanup(lambda: (proc.kill(), proc.wait(10), reader.join(10), proc.stderr.close()))
    if not ready.wait(30) or proc.poll() is not None or "port" not in found:
        raise AssertionError("Prometheus did not report a port and readiness:\n"
                             + "".join(log[-20:]))
    return found["port"]


def prometheus_query(api, query):
    """The query's instant vector as {tuple of label values: value}, or None when unanswered."""
    status, _, body = get(api, "/api/v1/query?" + urllib.parse.urlencode({"query": query}))
    if status != 200:
        return None
    return [(r["metric"], float(r["value"][1])) for r in json.loads(body)["data"]["result"]]


class MetricsOnHttpListener(unittest.TestCase):
    """/metrics beside /mcp: the Host/Origin allow-list (403) and the bearer token (401) first."""

    @classmethod
    def setUpClass(cls):
        cls.server = HttpProcess("--auth-token", TOKEN, name="imgmcp --http")
        cls.addClassCleanup(cls.server.close)

    def test_without_the_token_is_401(self):
        status, _, _ = get(self.server.port)
        self.assertEqual(status, 401)
        status, _, _ = get(self.server.port, headers={"Authorization": "Bearer wrong"})
        self.assertEqual(status, 401)

    def test_a_foreign_host_or_origin_is_403_even_with_the_token(self):
        auth = {"Authorization": f"Bearer {TOKEN}"}
        status, _, _ = get(self.server.port, headers={**auth, "Host": "evil.example:80"})
        self.assertEqual(status, 403)
        status, _, _ = get(self.server.port, headers={**auth, "Origin": "http://evil.example"})
        self.assertEqual(status, 403)

    def test_with_the_token_it_serves_the_exposition_and_counts_requests(self):
        auth = {"Authorization": f"Bearer {TOKEN}"}
        conn = self.server.connection()
        before = value(scrape(self.server.port, auth), "mcp_server_operation_duration_seconds_count",
                       mcp_method_name="initialize")
        init = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
                "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                           "clientInfo": {"name": "metrics-test", "version": "1"}}}
        conn.request("POST", "/mcp", body=json.dumps(init),
                     headers={**auth, "Host": f"127.0.0.1:{self.server.port}",
                              "Content-Type": "application/json",
                              "Accept": "application/json, text/event-stream"})
        resp = conn.getresponse()
        resp.read()
        self.assertEqual(resp.status, 200)
        session = resp.getheader("Mcp-Session-Id")
        conn.close()
        samples = scrape(self.server.port, auth)
        self.assertEqual(value(samples, "mcp_server_operation_duration_seconds_count",
                               mcp_method_name="initialize"), before + 1)
        self.assertGreaterEqual(value(samples, "imgmcp_http_sessions_open"), 1)
        self.assertNotIn(session, "\n".join(str(s) for s in samples))  # no session id label


    def test_gate_refusals_are_counted_by_status(self):
        auth = {"Authorization": f"Bearer {TOKEN}"}
        before = value(scrape(self.server.port, auth), "imgmcp_http_gate_rejections_total",
                       reason="413")
        with socket.create_connection(("127.0.0.1", self.server.port), timeout=TIMEOUT) as s:
            s.sendall(f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{self.server.port}\r\n"
                      "Content-Length: 999999999999\r\n\r\n".encode())
            self.assertIn(b" 413 ", s.recv(4096))
        self.assertEqual(value(scrape(self.server.port, auth), "imgmcp_http_gate_rejections_total",
                               reason="413"), before + 1)


class TasksByStatus(unittest.TestCase):
    """imgmcp_tasks_total counts the statuses this process's tasks reach."""

    def test_a_task_is_counted_when_created_and_when_completed(self):
        from test_tasks import TasksClient  # the modern client that declares the extension
        server = HttpProcess("--backend", "local", name="imgmcp --http")
        self.addCleanup(server.close)
        client = TasksClient(server.port)

        def count(samples, status):
            return value(samples, "imgmcp_tasks_total", status=status)

        self.assertEqual(count(scrape(server.port), "working"), 0)
        task = client.start("generate_image", {"session_id": "m1", "prompt": "a square",
                                               "inline": "none"})
        self.assertEqual(client.wait_status(task["taskId"])["status"], "completed")
        # The count follows the task's row, written just after tasks/get may show it completed.
        samples = wait_until(lambda: (lambda s: s if count(s, "completed") == 1 else None)(
            scrape(server.port)), TIMEOUT, "imgmcp_tasks_total{status=completed} to be 1")
        self.assertEqual(count(samples, "working"), 1)
        self.assertEqual(count(samples, "failed"), 0)
        self.assertEqual(count(samples, "cancelled"), 0)


class StdioWithMetricsListener(unittest.TestCase):
    """`--metrics 127.0.0.1:0` in stdio mode: a listener of its own, serving only /metrics."""

    def setUp(self):
        self.server = ServerProcess(args=["--backend", "local", "--metrics", "127.0.0.1:0"])
        self.addCleanup(self.server.__exit__, None, None, None)
        self.server.initialize()
        self.port = metrics_port(self.server)

    def make_calls(self):
        """Calls per tool (successes, isError results) as the server should count them."""
        for i in range(3):
            structured(self.server.call_tool("generate_image", {"prompt": "solid red",
                                                                 "session_id": f"m{i}"}))
        for _ in range(2):
            structured(self.server.call_tool("get_image", {"session_id": "m0", "inline": "none"}))
        error_text(self.server.call_tool("get_image", {"session_id": "nosuchsession"}))
        # An unknown tool is a protocol error (-32602), counted without its name (any string).
        self.assertEqual(self.server.request("tools/call", {"name": "no_such_tool",
                                                            "arguments": {}})["error"]["code"],
                         -32602)
        return {("generate_image", ""): 3, ("get_image", ""): 2, ("get_image", "tool_error"): 1,
                ("", "-32602"): 1}

    def test_counts_calls_per_tool_with_tool_errors_apart(self):
        expected = self.make_calls()
        samples = scrape(self.port)
        for (tool, error_type), count in expected.items():
            self.assertEqual(value(samples, "mcp_server_operation_duration_seconds_count",
                                   mcp_method_name="tools/call", gen_ai_tool_name=tool,
                                   error_type=error_type), count, (tool, error_type))
        self.assertEqual(value(samples, "imgmcp_versions_committed_total"), 3)
        self.assertGreater(value(samples, "imgmcp_stored_bytes_total"), 0)
        self.assertGreaterEqual(value(samples, "imgmcp_session_turn_wait_seconds_count"), 3)
        text = "\n".join(str(s) for s in samples)
        for secret in ("nosuchsession", "solid red", "m0", "no_such_tool"):
            self.assertNotIn(secret, text)  # no session id or prompt in any label

    def test_serves_only_metrics(self):
        self.assertEqual(get(self.port, "/mcp")[0], 404)
        self.assertEqual(get(self.port, "/gallery")[0], 404)
        self.assertEqual(get(self.port, headers={"Host": "evil.example"})[0], 403)

    def test_a_real_prometheus_scrapes_the_calls_made(self):
        require_tool("prometheus")
        expected = self.make_calls()
        api = self.start_prometheus()
        query = ('sum by (gen_ai_tool_name) (mcp_server_operation_duration_seconds_count'
                 '{mcp_method_name="tools/call"})')
        # Per tool, isError results included; the unknown tool's call has no tool label.
        want = {"generate_image": 3.0, "get_image": 3.0, None: 1.0}

        def answer():
            url = "/api/v1/query?" + urllib.parse.urlencode({"query": query})
            status, _, body = get(api, url)
            if status != 200:
                return None
            result = json.loads(body)["data"]["result"]
            got = {r["metric"].get("gen_ai_tool_name"): float(r["value"][1]) for r in result}
            return got if got == want else None
        self.assertEqual(wait_until(answer, 30, f"Prometheus to answer {want}"), want)
        self.assertEqual(sum(expected.values()), 7)

    def start_prometheus(self):
        return start_prometheus(self, [self.port])


class MetricsOff(unittest.TestCase):
    def test_metrics_off_serves_no_metrics_over_http(self):
        with HttpProcess("--metrics", "off", name="imgmcp --metrics off") as server:
            self.assertEqual(get(server.port)[0], 404)
            self.assertNotIn("metrics at", server.stderr)


class FlagValidation(unittest.TestCase):
    def run_imgmcp(self, args, env=None):
        return subprocess.run([binary_path(), *args], stdin=subprocess.DEVNULL,
                              capture_output=True, timeout=TIMEOUT, env=clean_env(env))

    def test_a_bad_address_names_the_flag_or_variable(self):
        proc = self.run_imgmcp(["--metrics", "127.0.0.1:notaport"])
        self.assertEqual(proc.returncode, 2, proc.stderr)
        self.assertIn(b"--metrics", proc.stderr)
        proc = self.run_imgmcp([], env={"IMGMCP_METRICS": "host:99999"})
        self.assertEqual(proc.returncode, 2, proc.stderr)
        self.assertIn(b"IMGMCP_METRICS", proc.stderr)

    def test_help_lists_the_flag(self):
        proc = self.run_imgmcp(["--help"])
        self.assertIn(b"--metrics [HOST:]PORT", proc.stdout)


class RetryStormFromGemini(FakeGeminiTestCase):
    """A 429 storm from the Gemini fake shows in imgmcp_backend_retries_total{cause="429"}."""

    def test_429s_are_counted_as_retries_by_cause(self):
        server = self.start_imgmcp(extra_args=["--metrics", "127.0.0.1:0"])
        port = metrics_port(server)
        # Two 429s (the backoff doubles from 1 s, so a longer storm only makes the test slower)
        # before an answer; the causes of every kind are counted in the unit tests
        # (tests/unit/gemini_client/client_fake_test.cpp).
        self.fake.script(*[{"status": 429, "retry_delay": "0.05s"}] * 2)
        started = time.monotonic()
        structured(server.call_tool("generate_image", {"prompt": "a red square",
                                                        "session_id": "storm"}))
        self.assertLess(time.monotonic() - started, 60)
        samples = scrape(port)
        self.assertEqual(value(samples, "imgmcp_backend_retries_total", backend="gemini",
                               cause="429"), 2)
        self.assertEqual(value(samples, "imgmcp_backend_retries_total", backend="gemini",
                               cause="5xx"), 0)
        self.assertEqual(value(samples, "imgmcp_backend_calls_total", backend="gemini",
                               outcome="ok"), 1)
        self.assertEqual(value(samples, "imgmcp_backend_call_duration_seconds_count",
                               backend="gemini"), 1)


class PrometheusScrapesEveryReplica(unittest.TestCase):
    """Three --http replicas on one data dir, each behind the bearer token, scraped by one
    Prometheus with the documented `authorization: {credentials: TOKEN}`: its sums per tool over
    the replicas equal the calls the test made through each."""

    def test_the_sum_over_replicas_equals_the_calls_made(self):
        require_tool("prometheus")
        data_dir = tempfile.mkdtemp(prefix="imgmcp-metrics-replicas-")
        self.addCleanup(shutil.rmtree, data_dir, True)
        replicas = []
        for i in range(3):
            replica = HttpProcess("--backend", "local", "--auth-token", TOKEN, data_dir=data_dir,
                                  name=f"replica {i}")
            self.addCleanup(replica.close, check=False)
            replicas.append(replica)
        made = {"generate_image": 0, "get_image": 0}
        for i, replica in enumerate(replicas):
            client = TokenClient(replica.port)
            for k in range(i + 1):  # 1, 2 and 3 generations: each replica counts its own
                self.assertFalse(client.call_tool("generate_image", {
                    "session_id": f"r{i}-{k}", "prompt": "solid blue",
                    "inline": "none"})["result"].get("isError"))
                made["generate_image"] += 1
            self.assertFalse(client.call_tool("get_image", {
                "session_id": "r0-0", "inline": "none"})["result"].get("isError"))
            made["get_image"] += 1
        api = start_prometheus(self, [r.port for r in replicas], token=TOKEN)

        def up():
            answer = prometheus_query(api, 'sum(up{job="imgmcp"})')
            return answer and answer[0][1] == 3.0
        wait_until(up, 30, "Prometheus to scrape all three replicas")
        query = ('sum by (gen_ai_tool_name) (mcp_server_operation_duration_seconds_count'
                 '{mcp_method_name="tools/call"})')

        def sums():
            answer = prometheus_query(api, query) or []
            got = {m.get("gen_ai_tool_name"): v for m, v in answer}
            return got if got == {k: float(v) for k, v in made.items()} else None
        self.assertEqual(wait_until(sums, 30, f"Prometheus to answer {made}"),
                         {"generate_image": 6.0, "get_image": 3.0})


if __name__ == "__main__":
    unittest.main()
