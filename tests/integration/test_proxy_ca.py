"""Proxies and CAs for every outgoing call, through a real tinyproxy on 127.0.0.1 started by the
test (its log proves what went through it): plain http Gemini calls as absolute-URI requests
with proxy credentials from HTTP_PROXY; Vertex AI and its token endpoint over TLS through
HTTPS_PROXY (lower-case here) as CONNECT tunnels, trusting the test's CA from --ca-file or
SSL_CERT_FILE; NO_PROXY proved by the proxy never seeing the call; an untrusted certificate is a
clear error; --self-check names the proxy and never its password."""
import os
import shutil
import socket
import subprocess
import tempfile
import time
import unittest

from fake_gemini_support import TEST_KEY, FakeGemini
from mcp_harness import ServerProcess
from tools_support import error_text, structured
from vertex_support import ServiceAccount, configure_fake, vertex_env

PROXY_USER, PROXY_PASSWORD = "imgmcp", "pr0xy-" + os.urandom(6).hex()
START_TIMEOUT = 20


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Tinyproxy:
    """tinyproxy in the foreground with Basic auth, logging every request to a file."""

    def __init__(self, workdir):
        self.port = free_port()
        self.log_path = os.path.join(workdir, "tinyproxy.log")
        conf = os.path.join(workdir, "tinyproxy.conf")
        with open(conf, "w") as f:
            f.write(f"Port {self.port}\nListen 127.0.0.1\nTimeout 120\nMaxClients 200\n"
                    f'LogFile "{self.log_path}"\nLogLevel Info\n'
                    f"BasicAuth {PROXY_USER} {PROXY_PASSWORD}\n")
        self.proc = subprocess.Popen(["tinyproxy", "-d", "-c", conf], stdin=subprocess.DEVNULL,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + START_TIMEOUT
        while True:  # readiness: the port accepts a connection
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                break
            except OSError:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    self.close()
                    raise RuntimeError("tinyproxy did not start")
                time.sleep(0.02)

    def url(self, credentials=True, password=PROXY_PASSWORD):
        auth = f"{PROXY_USER}:{password}@" if credentials else ""
        return f"http://{auth}127.0.0.1:{self.port}"

    def requests(self):
        with open(self.log_path, errors="replace") as f:
            return [line.split("): ", 1)[1] for line in f if "Request (file descriptor" in line]

    def close(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)


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
        with open(self.proxy.log_path, errors="replace") as f:
            self.assertNotIn(TEST_KEY, f.read())

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
