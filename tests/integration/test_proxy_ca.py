"""Proxies and CAs for every outgoing call, through a real tinyproxy on 127.0.0.1 started by the
test (its log proves what went through it): plain http Gemini calls as absolute-URI requests
with proxy credentials from HTTP_PROXY; Vertex AI and its token endpoint over TLS through
HTTPS_PROXY (lower-case here) as CONNECT tunnels, trusting the test's CA from --ca-file or
SSL_CERT_FILE; NO_PROXY proved by the proxy never seeing the call; an untrusted certificate is a
clear error; --self-check names the proxy and never its password."""
import os
import select
import shutil
import subprocess
import tempfile
import threading
import time
import unittest

from fake_gemini_support import TEST_KEY, FakeGemini
from mcp_harness import ServerProcess
from ports import AddressInUse, on_a_free_port  # tests/support, on sys.path through mcp_harness
from skips import require_tool  # tests/support
from tools_support import error_text, structured
from vertex_support import ServiceAccount, configure_fake, vertex_env

PROXY_USER, PROXY_PASSWORD = "imgmcp", "pr0xy-" + os.urandom(6).hex()
START_TIMEOUT = 20


class Tinyproxy:
    """tinyproxy in the foreground with Basic auth, logging every request to its stdout, which a
    thread keeps reading into memory. tinyproxy cannot listen on port 0: it starts on a port
    drawn below the ephemeral range, and on a fresh one when it reports the port taken
    (tests/support/ports.py)."""

    def __init__(self, workdir):
        self.binary = require_tool("tinyproxy")
        self.workdir = workdir
        self._reader = None
        self._lock = threading.Lock()  # guards _log and the reads of the log pipe
        self._log = b""
        self.port = on_a_free_port(self._start_on)

    def _start_on(self, port):
        conf = os.path.join(self.workdir, "tinyproxy.conf")
        with open(conf, "w") as f:  # no LogFile: in the foreground (-d) it logs to stdout
            f.write(f"Port {port}\nListen 127.0.0.1\nTimeout 120\nMaxClients 200\n"
                    f"LogLevel Info\nBasicAuth {PROXY_USER} {PROXY_PASSWORD}\n")
        self.proc = subprocess.Popen([self.binary, "-d", "-c", conf], stdin=subprocess.DEVNULL,
                                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        os.set_blocking(self.proc.stdout.fileno(), False)
        self._log = b""
        deadline = time.monotonic() + START_TIMEOUT
        running = True  # until its readiness line, its end or the deadline
        while running and b"Accepting connections" not in self._log:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self.proc.stdout], [], [], left)[0]:
                break
            running = self._drain()
        if b"Accepting connections" not in self._log:
            said = self._log.decode(errors="replace")
            self.close()
            if "Could not create listening sockets" in said:
                raise AddressInUse(said)
            raise RuntimeError("tinyproxy did not start:\n" + said)
        self._reader = threading.Thread(target=self._keep_reading, daemon=True)
        self._reader.start()
        return port

    def _drain(self):
        """Appends what the pipe holds now; False at its end. With _lock held once the reader
        thread runs."""
        while True:
            try:
                chunk = os.read(self.proc.stdout.fileno(), 65536)
            except BlockingIOError:
                return True
            if not chunk:
                return False
            self._log += chunk

    def _keep_reading(self):  # the pipe never fills, whatever a test makes the proxy log
        while True:
            select.select([self.proc.stdout], [], [])
            with self._lock:
                if not self._drain():
                    return

    def log(self):
        """Everything the proxy has logged: what it wrote before this call is all there, since
        the pipe is drained here too."""
        with self._lock:
            self._drain()
            return self._log.decode(errors="replace")

    def url(self, credentials=True, password=PROXY_PASSWORD):
        auth = f"{PROXY_USER}:{password}@" if credentials else ""
        return f"http://{auth}127.0.0.1:{self.port}"

    def requests(self):
        return [line.split("): ", 1)[1] for line in self.log().splitlines()
                if "Request (file descriptor" in line]

    def close(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)
        if self._reader is not None:
            self._reader.join(10)  # it ends at the end of the pipe
        self.proc.stdout.close()


def make_ca_and_server_cert(d):
    run = lambda *a: subprocess.run(a, check=True, capture_output=True, timeout=60)  # noqa: E731
    ca_key, ca = os.path.join(d, "ca.key"), os.path.join(d, "ca.pem")
    key, csr, cert = (os.path.join(d, n) for n in ("srv.key", "srv.csr", "srv.pem"))
    run("openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", ca_key, "-out",
        ca, "-days", "2", "-subj", "/CN=imgmcp test CA")
    run("openssl", "req", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", csr, "-subj",
        "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1")
    run("openssl", "x509", "-req", "-in", csr, "-CA", ca, "-CAkey", ca_key, "-CAcreateserial",
        "-out", cert, "-days", "2", "-copy_extensions", "copyall")
    return cert, key, ca


class ProxyAndCaTests(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        require_tool("openssl")
        cls.dir = tempfile.mkdtemp(prefix="imgmcp-proxy-")
        cls.addClassCleanup(shutil.rmtree, cls.dir, True)
        cls.cert, cls.key, cls.ca = make_ca_and_server_cert(cls.dir)
        cls.fake = FakeGemini()
        cls.addClassCleanup(cls.fake.close)
        cls.tls_fake = FakeGemini(tls=(cls.cert, cls.key, cls.ca))
        cls.addClassCleanup(cls.tls_fake.close)
        cls.account = ServiceAccount()
        cls.addClassCleanup(cls.account.close)
        cls.sa_file = cls.account.service_account_file(cls.tls_fake.base_url + "/token")

    def setUp(self):
        self.fake.reset()
        self.tls_fake.reset()
        configure_fake(self.tls_fake, self.account)
        workdir = tempfile.mkdtemp(prefix="imgmcp-tinyproxy-")
        self.addCleanup(shutil.rmtree, workdir, True)
        self.proxy = Tinyproxy(workdir)
        self.addCleanup(self.proxy.close)

    def start(self, env, args=()):
        server = ServerProcess(args=list(args), env=env)
        self.addCleanup(self.assert_no_proxy_password, server)
        self.addCleanup(server.__exit__, None, None, None)
        server.initialize()
        return server

    def assert_no_proxy_password(self, server):
        self.assertNotIn(PROXY_PASSWORD, server.stderr)

    def generate(self, server):
        return server.call_tool("generate_image", {"session_id": "p", "prompt": "solid red",
                                                   "inline": "none"}, timeout=60)

    def vertex(self, **extra):
        return vertex_env(self.tls_fake, self.sa_file, **extra)

    def test_http_gemini_calls_go_through_http_proxy_with_its_credentials(self):
        port = self.fake.base_url.rsplit(":", 1)[1]
        env = {"GEMINI_API_KEY": TEST_KEY, "GEMINI_BASE_URL": self.fake.base_url,
               "HTTP_PROXY": self.proxy.url()}
        server = self.start(env, ["--backend", "gemini"])
        self.assertEqual(structured(self.generate(server))["version"], 1)
        seen = self.proxy.requests()
        self.assertTrue(any(r.startswith(f"POST http://127.0.0.1:{port}/v1beta/models/")
                            for r in seen), seen)
        self.assertNotIn(TEST_KEY, self.proxy.log())

    def test_vertex_and_its_token_endpoint_tunnel_through_https_proxy_with_ca_file(self):
        port = self.tls_fake.base_url.rsplit(":", 1)[1]
        server = self.start(self.vertex(https_proxy=self.proxy.url()),
                            ["--backend", "vertex", "--ca-file", self.ca])
        self.assertEqual(structured(self.generate(server))["backend"], "vertex")
        connects = [r for r in self.proxy.requests() if r.startswith(f"CONNECT 127.0.0.1:{port}")]
        self.assertGreaterEqual(len(connects), 2, self.proxy.requests())  # token + generate
        self.assertEqual([r["kind"] for r in self.tls_fake.token_requests()], ["jwt"])
        self.assertTrue(self.tls_fake.requests()[0]["bearer_valid"])

    def test_no_proxy_is_proved_by_its_absence_from_the_proxy_log(self):
        server = self.start(self.vertex(HTTPS_PROXY=self.proxy.url(), NO_PROXY="localhost,127.0.0.1",
                                        SSL_CERT_FILE=self.ca), ["--backend", "vertex"])
        self.assertEqual(structured(self.generate(server))["version"], 1)
        self.assertEqual(self.proxy.requests(), [])
        self.assertEqual(len(self.tls_fake.requests()), 1)

    def test_an_untrusted_certificate_is_a_clear_error_and_commits_nothing(self):
        server = self.start(self.vertex(), ["--backend", "vertex"])
        text = error_text(self.generate(server))
        self.assertIn("could not be verified", text)
        self.assertEqual(self.tls_fake.requests(), [])

    def test_wrong_proxy_credentials_are_named_as_such_and_commit_nothing(self):
        wrong = self.proxy.url(password="not-the-password")
        cases = [({"GEMINI_API_KEY": TEST_KEY, "GEMINI_BASE_URL": self.fake.base_url,
                   "HTTP_PROXY": wrong}, ["--backend", "gemini"]),
                 (self.vertex(https_proxy=wrong), ["--backend", "vertex", "--ca-file", self.ca])]
        for env, args in cases:
            with self.subTest(backend=args[1]):
                server = self.start(env, args)
                text = error_text(self.generate(server))
                self.assertIn(f"the proxy 127.0.0.1:{self.proxy.port} refused", text)
                self.assertIn("user and password in HTTPS_PROXY/HTTP_PROXY", text)
                self.assertNotIn("not-the-password", text + server.stderr)
                unknown = error_text(server.call_tool("get_image", {"session_id": "p"}))
                self.assertIn("unknown session", unknown)
        self.assertEqual(self.fake.requests(), [])
        self.assertEqual(self.tls_fake.requests(), [])

    def test_self_check_names_the_proxy_without_its_password(self):
        server = ServerProcess(args=["--backend", "vertex", "--self-check-token", "--ca-file",
                                     self.ca], env=self.vertex(HTTPS_PROXY=self.proxy.url()))
        self.addCleanup(server.__exit__, None, None, None)
        self.assertEqual(server.proc.wait(timeout=60), 0, server.stderr)
        server.__exit__(None, None, None)
        self.assertIn(f"proxy 127.0.0.1:{self.proxy.port} (with credentials)", server.stderr)
        self.assertIn("token request ok", server.stderr)
        self.assertNotIn(PROXY_PASSWORD, server.stderr)
        self.assertTrue(self.proxy.requests())


if __name__ == "__main__":
    unittest.main()
