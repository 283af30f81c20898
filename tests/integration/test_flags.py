"""Command-line sharp edges against the real binary: usage errors exit 2 before any
start-up line, the HTTP Host/Origin allow-list can be extended (--allow-host, IMGMCP_ALLOW_HOSTS)
and accepts an explicit bind address, a non-loopback bind without a token is warned about, an
--allow-read directory that does not exist is warned about, and --self-check really opens the
session store and the backend's network module, reporting what it opened or exiting 1.
"""
import http.client
import os
import re
import select
import shutil
import socket
import sqlite3
import subprocess
import tempfile
import unittest

from docs_support import assert_listed, names_of_tests
from test_http import LATEST, HttpServer

TIMEOUT = 30


def run_in(data, *args, env=None, binary=None):
    """Runs imgmcp on the data dir `data` (in the temp dir holding it), without the caller's key,
    token or allowed hosts."""
    full_env = {k: v for k, v in os.environ.items()
                if k not in ("GEMINI_API_KEY", "IMGMCP_AUTH_TOKEN", "IMGMCP_ALLOW_HOSTS",
                             "IMGMCP_STORE", "IMGMCP_BACKEND")}
    full_env.update(env or {})
    return subprocess.run([binary or os.environ["IMGMCP_BIN"], "--data-dir", data, *args],
                          stdin=subprocess.DEVNULL, capture_output=True, text=True,
                          timeout=TIMEOUT, env=full_env, cwd=os.path.dirname(data))


def run(*args, env=None):
    data = tempfile.mkdtemp(prefix="imgmcp-flags-")
    try:
        return run_in(data, "--backend", "local", *args, env=env)
    finally:
        shutil.rmtree(data, ignore_errors=True)


def initialize(server, host_header, origin=None):
    headers = {"Host": host_header}
    if origin:
        headers["Origin"] = origin
    status, _, body = server.request("POST", {
        "jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": LATEST, "capabilities": {},
                   "clientInfo": {"name": "test_flags", "version": "1"}}}, headers=headers)
    return status, body


class UsageErrors(unittest.TestCase):
    def test_a_bad_http_address_exits_2_before_any_start_up_line(self):
        for value in ("abc", "127.0.0.1:99999", "::1:80", ":80"):
            with self.subTest(value=value):
                proc = run("--http", value)
                self.assertEqual(proc.returncode, 2, proc.stderr)
                self.assertIn("--http", proc.stderr)
                self.assertNotIn("backend", proc.stderr)  # the start-up lines
                self.assertEqual(proc.stdout, "")

    def test_other_bad_flags_exit_2(self):
        for args in (["--http-header-timeout", "0"], ["--http-max-sessions", "x"],
                     ["--allow-host", ""], ["--allow-host", "a/b"]):
            with self.subTest(args=args):
                proc = run(*args)
                self.assertEqual(proc.returncode, 2, proc.stderr)
                self.assertIn(args[0], proc.stderr)


class AllowReadWarning(unittest.TestCase):
    def test_a_missing_allow_read_directory_is_warned_about(self):
        missing = os.path.join(tempfile.gettempdir(), "imgmcp-no-such-dir-%d" % os.getpid())
        proc = run("--allow-read", missing, "--self-check")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertRegex(proc.stderr, re.escape(missing) + r".*no such directory")

    def test_an_existing_directory_is_not(self):
        d = tempfile.mkdtemp(prefix="imgmcp-allow-")
        self.addCleanup(shutil.rmtree, d, True)
        proc = run("--allow-read", d, "--self-check")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertNotIn("--allow-read", proc.stderr)


class AllowWriteWarning(unittest.TestCase):
    def test_a_missing_or_data_dir_allow_write_directory_is_warned_about(self):
        data = tempfile.mkdtemp(prefix="imgmcp-flags-")
        self.addCleanup(shutil.rmtree, data, True)
        missing = os.path.join(data, "no-such-dir")
        inside = os.path.join(data, "inside")
        os.mkdir(inside)
        proc = run_in(data, "--backend", "local", "--allow-write", missing, "--allow-write", inside,
                      "--self-check")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertRegex(proc.stderr, "--allow-write " + re.escape(missing) + r".*no such directory")
        self.assertRegex(proc.stderr,
                         "--allow-write " + re.escape(inside) + r" is inside the data dir")

    def test_an_empty_allow_write_exits_2(self):
        proc = run("--allow-write", "")
        self.assertEqual(proc.returncode, 2, proc.stderr)
        self.assertIn("--allow-write", proc.stderr)


class AllowedHosts(unittest.TestCase):
    def test_allow_host_flag_and_environment(self):
        server = HttpServer("--allow-host", "imgmcp.test", "--allow-host", "fd00::5",
                            env={"IMGMCP_ALLOW_HOSTS": "other.test, 10.1.2.3"})
        self.addCleanup(server.stop)
        port = server.port
        for host in ("imgmcp.test:%d" % port, "IMGMCP.TEST", "[fd00::5]:%d" % port,
                     "other.test:%d" % port, "10.1.2.3:%d" % port):
            with self.subTest(host=host):
                self.assertEqual(initialize(server, host)[0], 200)
        self.assertEqual(initialize(server, "127.0.0.1:%d" % port,
                                    origin="http://imgmcp.test:%d" % port)[0], 200)
        for host in ("evil.test:%d" % port, "imgmcp.test.evil:%d" % port):
            with self.subTest(host=host):
                self.assertEqual(initialize(server, host)[0], 403)

    def test_an_explicit_bind_address_is_allowed(self):
        # 127.0.0.2 is loopback on Linux, so this binds without touching the network.
        server = HttpServer("--http", "127.0.0.2:0")
        self.addCleanup(server.stop)
        server.connection = lambda: http.client.HTTPConnection("127.0.0.2", server.port,
                                                               timeout=TIMEOUT)
        self.assertEqual(initialize(server, "127.0.0.2:%d" % server.port)[0], 200)
        self.assertEqual(initialize(server, "127.0.0.3:%d" % server.port)[0], 403)


class NonLoopbackWarning(unittest.TestCase):
    def test_a_wildcard_bind_without_a_token_is_warned_about(self):
        server = HttpServer("--http", "0.0.0.0:0")
        self.addCleanup(server.stop)
        self.assertIn("no --auth-token", server.stderr)
        # Bound to every interface: the machine's own addresses are valid Host values.
        addresses = local_ipv4_addresses()
        for address in addresses[:2]:
            with self.subTest(address=address):
                self.assertEqual(initialize(server, "%s:%d" % (address, server.port))[0], 200)
        self.assertEqual(initialize(server, "evil.test:%d" % server.port)[0], 403)

    def test_no_warning_with_a_token_or_on_loopback(self):
        for args in (("--http", "0.0.0.0:0", "--auth-token", "t0k"), ()):
            with self.subTest(args=args):
                server = HttpServer(*args)
                self.addCleanup(server.stop)
                self.assertNotIn("no --auth-token", server.stderr)


class SelfCheck(unittest.TestCase):
    """--self-check opens the store and the backend as serving would, reports them on one stderr
    line and exits 0, or exits 1 saying what could not be opened."""

    def setUp(self):
        self.root = tempfile.mkdtemp(prefix="imgmcp-self-check-")
        self.addCleanup(shutil.rmtree, self.root, True)
        self.data = os.path.join(self.root, "data")
        self.db = os.path.join(self.data, "imgmcp.db")

    def summary(self, proc):
        """The one "self-check ok:" line, after checking the exit and that stdout stayed empty."""
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(proc.stdout, "")
        lines = [line for line in proc.stderr.splitlines() if "self-check ok: " in line]
        self.assertEqual(len(lines), 1, proc.stderr)
        return lines[0]

    def assert_fails(self, proc, *expected):
        self.assertEqual(proc.returncode, 1, proc.stderr)
        self.assertEqual(proc.stdout, "")
        self.assertNotIn("self-check ok", proc.stderr)
        for text in expected:
            self.assertIn(text, proc.stderr)

    def test_a_good_data_dir_is_opened_as_the_store_and_reported(self):
        line = self.summary(run_in(self.data, "--backend", "local", "--self-check"))
        self.assertIn("backend local, model imgmcp-local-1", line)
        self.assertIn("store sqlite, data dir " + self.data, line)
        # The store was opened, not only its directory checked: the database has its schema.
        with sqlite3.connect(f"file:{self.db}?mode=ro", uri=True) as db:
            tables = [row[0] for row in db.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table'")]
        self.assertTrue(tables, "no tables in " + self.db)

    def test_a_database_that_is_not_sqlite_fails_naming_it(self):
        os.makedirs(self.data)
        with open(self.db, "wb") as f:
            f.write(b"this is not an SQLite database" * 10)
        self.assert_fails(run_in(self.data, "--backend", "local", "--self-check"),
                          "self-check FAILED: session store (data dir " + self.data + ")",
                          self.db)

    def test_a_directory_where_the_database_should_be_fails_naming_it(self):
        os.makedirs(self.db)
        self.assert_fails(run_in(self.data, "--backend", "local", "--self-check"),
                          self.db, "not a regular file")

    def test_an_unreachable_postgresql_store_fails_without_its_password(self):
        url = "postgresql://imgmcp:s3cret-pw@127.0.0.1:1/nowhere?connect_timeout=2"
        proc = run_in(self.data, "--backend", "local", "--store", url, "--self-check")
        self.assert_fails(proc, "self-check FAILED: session store (PostgreSQL at 127.0.0.1:1/nowhere")
        self.assertNotIn("s3cret-pw", proc.stderr)

    def test_gemini_is_reported_with_its_endpoint_and_model_without_a_call_or_the_key(self):
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.addCleanup(listener.close)
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)
        endpoint = "http://127.0.0.1:%d" % listener.getsockname()[1]
        key = "selfcheck-dummy-key-" + "0123456789abcdef"
        proc = run_in(self.data, "--backend", "gemini", "--gemini-base-url", endpoint,
                      "--model", "gemini-3-pro-image", "--self-check",
                      env={"GEMINI_API_KEY": key})
        line = self.summary(proc)
        self.assertIn("backend gemini at " + endpoint, line)
        self.assertIn("network module", line)
        self.assertIn("model gemini-3-pro-image", line)
        self.assertIn("store sqlite, data dir " + self.data, line)
        self.assertNotIn(key, proc.stderr)
        readable, _, _ = select.select([listener], [], [], 0)
        self.assertEqual(readable, [], "--self-check called the backend")

    def test_a_network_module_that_cannot_be_loaded_fails_naming_it(self):
        # The module file is there (so start-up's check passes) but is not a library: only
        # loading it, as --self-check does for gemini, finds that out.
        binary = os.path.join(self.root, "bin", "imgmcp")
        module = os.path.join(self.root, "lib", "imgmcp", "libimgmcp_net.so")
        os.makedirs(os.path.dirname(binary))
        os.makedirs(os.path.dirname(module))
        shutil.copy2(os.environ["IMGMCP_BIN"], binary)
        with open(module, "wb") as f:
            f.write(b"not an ELF file\n")
        proc = run_in(self.data, "--backend", "gemini", "--gemini-base-url", "http://127.0.0.1:9",
                      "--self-check", binary=binary, env={"GEMINI_API_KEY": "k" * 39})
        self.assert_fails(proc, "self-check FAILED: ", "could not be loaded from " + module)
        self.assertNotIn("k" * 39, proc.stderr)


def local_ipv4_addresses():
    """This machine's IPv4 interface addresses, read from /proc (no network involved)."""
    found = set()
    try:
        with open("/proc/net/fib_trie") as f:
            lines = f.read().splitlines()
    except OSError:
        return []
    for i, line in enumerate(lines):
        if "/32 host LOCAL" in line and i > 0:
            m = re.search(r"(\d+\.\d+\.\d+\.\d+)", lines[i - 1])
            if m:
                found.add(m.group(1))
    return sorted(found)


class CatalogueDocs(unittest.TestCase):
    def test_the_docs_list_every_test_here(self):
        assert_listed(self, names_of_tests(UsageErrors, AllowReadWarning, AllowWriteWarning,
                                       AllowedHosts, NonLoopbackWarning, SelfCheck))


if __name__ == "__main__":
    unittest.main()
