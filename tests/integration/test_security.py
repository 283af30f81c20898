"""Security checks over the real binary: the API key never leaks (stdout, stderr, result
texts, files), no shell or other program is ever executed, files and directories are private
(0600/0700 even with umask 000), and the server refuses to start, before answering anything, with a
data dir it cannot create, write or lock. (HTTP Host/Origin/token checks live in test_http.py.)
"""
import json
import os
import shutil
import stat
import subprocess
import tempfile
import unittest

import mcp_harness
from mcp_harness import ServerProcess
from skips import require, require_tool  # tests/support, on sys.path through mcp_harness
from tools_support import small_png_b64

# A dummy key: distinctive enough that any copy of it, anywhere, is found.
API_KEY = "DUMMY-imgmcp-sec-key-7f3c91e2b4d05a68"  # not a real key, nor shaped like one
SHELL_BAIT = "solid red $(touch {sentinel}) `touch {sentinel}`; touch {sentinel} | sh"


def all_bytes_under(root):
    """(path, bytes) of every regular file under root."""
    for dirpath, _, files in os.walk(root):
        for name in files:
            path = os.path.join(dirpath, name)
            if os.path.isfile(path) and not os.path.islink(path):
                with open(path, "rb") as f:
                    yield path, f.read()


def exercise_tools(server, sentinel, expect_ok=True):
    """A round of calls touching every tool, error paths included; returns the responses."""
    responses = []
    prompt = SHELL_BAIT.format(sentinel=sentinel)
    responses.append(server.call_tool("generate_image", {"prompt": prompt, "session_id": "sec",
                                                         "inline": "preview"}, timeout=60))
    responses.append(server.call_tool("edit_image", {
        "session_id": "sec2", "prompt": "invert", "inline": "full",
        "image": {"data": small_png_b64(8, (30, 60, 90)), "mime_type": "image/png"}}, timeout=60))
    responses.append(server.call_tool("get_image", {"session_id": "sec2", "version": 1}))
    responses.append(server.call_tool("reset_session", {"session_id": "sec2", "to_version": 1}))
    responses.append(server.call_tool("get_image", {"session_id": "nope"}))
    responses.append(server.call_tool("edit_image", {"session_id": "sec2", "prompt": "bogus op"},
                                      timeout=60))
    responses.append(server.request("resources/list"))
    if expect_ok:
        for resp in responses[:4]:
            assert not resp["result"].get("isError"), resp
    return responses


class ApiKeyRedaction(unittest.TestCase):
    def check_no_key(self, server, responses):
        server.close_stdin()
        server.wait_exit(timeout=30)
        server.drain_until_eof(timeout=10)
        stdout = b"".join(server.raw_stdout)
        self.assertNotIn(API_KEY.encode(), stdout)
        self.assertNotIn(API_KEY, server.stderr)
        for resp in responses:
            self.assertNotIn(API_KEY, str(resp))
        for path, data in all_bytes_under(server.data_dir):
            self.assertNotIn(API_KEY.encode(), data, path)
        # Part of the key is not a leak either (e.g. "AIza…68" style masking is fine, a prefix of
        # more than a few characters is not).
        self.assertNotIn(API_KEY[5:25], server.stderr + stdout.decode("utf-8", "replace"))

    def test_local_backend_with_a_key_in_the_environment(self):
        server = ServerProcess(args=["--backend", "local", "--log-level", "debug"],
                               env={"GEMINI_API_KEY": API_KEY})
        self.addCleanup(server.__exit__, None, None, None)
        server.initialize()
        responses = exercise_tools(server, os.path.join(server.data_dir, "pwned"))
        self.check_no_key(server, responses)

    def test_gemini_backend_that_cannot_connect(self):
        # 127.0.0.1:1 refuses at once; every attempt fails with a connection error.
        server = ServerProcess(
            args=["--backend", "gemini", "--gemini-base-url", "http://127.0.0.1:1",
                  "--gemini-timeout", "3", "--log-level", "debug"],
            env={"GEMINI_API_KEY": API_KEY})
        self.addCleanup(server.__exit__, None, None, None)
        init = server.initialize()
        self.assertEqual(init["serverInfo"]["name"], "imgmcp")
        responses = exercise_tools(server, os.path.join(server.data_dir, "pwned"), expect_ok=False)
        failed = responses[0]["result"]
        self.assertTrue(failed.get("isError"))
        self.assertIn("127.0.0.1", failed["content"][0]["text"])
        self.check_no_key(server, responses)


class NoShell(unittest.TestCase):
    """The server never executes anything: no shell, no helper program, not even for odd input."""

    def test_no_execve_besides_the_server_itself(self):
        strace = require_tool("strace")
        probe = subprocess.run([strace, "-f", "-qq", "-e", "trace=execve", "-o", os.devnull,
                                "true"], capture_output=True, timeout=30)
        require(probe.returncode == 0,
                f"strace cannot trace here (no ptrace?): {probe.stderr[-200:]!r}")
        # Local backend: every tool succeeds. Gemini backend (unreachable): the HTTP client's
        # connection and retry paths run.
        for label, args, expect_ok in [
            ("local", ["--backend", "local"], True),
            ("gemini", ["--backend", "gemini", "--gemini-base-url", "http://127.0.0.1:1",
                        "--gemini-timeout", "2"], False),
        ]:
            with self.subTest(backend=label):
                calls, sentinel = self.trace_execve(strace, args, expect_ok)
                self.assertEqual(len(calls), 1, "\n".join(calls))
                self.assertIn(os.path.basename(mcp_harness.binary_path()), calls[0])
                self.assertFalse(os.path.exists(sentinel))

    def trace_execve(self, strace, args, expect_ok):
        """Runs the server under strace through every tool; its execve/execveat lines."""
        work = tempfile.mkdtemp(prefix="imgmcp-noshell-")
        self.addCleanup(shutil.rmtree, work, True)
        trace = os.path.join(work, "execve.trace")
        wrapper = os.path.join(work, "imgmcp-under-strace")
        with open(wrapper, "w") as f:
            f.write("#!/bin/sh\nexec %s -f -qq -e trace=execve,execveat -o %s -- %s \"$@\"\n"
                    % (strace, trace, mcp_harness.binary_path()))
        os.chmod(wrapper, 0o700)
        sentinel = os.path.join(work, "pwned")
        old = os.environ["IMGMCP_BIN"]
        os.environ["IMGMCP_BIN"] = wrapper
        try:
            # LeakSanitizer (ASan stage) stops the world with ptrace, which fails under strace.
            server = ServerProcess(args=args, env={
                "GEMINI_API_KEY": API_KEY,
                "ASAN_OPTIONS": os.environ.get("ASAN_OPTIONS", "") + ":detect_leaks=0"})
        finally:
            os.environ["IMGMCP_BIN"] = old
        self.addCleanup(server.__exit__, None, None, None)
        server.initialize()
        exercise_tools(server, sentinel, expect_ok=expect_ok)
        server.close_stdin()
        self.assertEqual(server.wait_exit(timeout=30), 0)
        with open(trace) as f:
            return [l for l in f.read().splitlines() if "execve" in l], sentinel

    def test_shell_metacharacters_in_prompts_are_just_text(self):
        server = ServerProcess(args=["--backend", "local"])
        self.addCleanup(server.__exit__, None, None, None)
        server.initialize()
        sentinel = os.path.join(server.data_dir, "pwned")
        prompt = SHELL_BAIT.format(sentinel=sentinel)
        resp = server.call_tool("generate_image", {"prompt": prompt, "session_id": "bait",
                                                   "inline": "none"}, timeout=60)
        self.assertFalse(resp["result"].get("isError"), resp)
        manifest = server.request("resources/read", {"uri": "imgmcp://sessions/bait"})
        self.assertEqual(json.loads(manifest["result"]["contents"][0]["text"])["versions"][0]
                         ["prompt"], prompt)  # results cut prompts; the manifest has them whole
        self.assertFalse(os.path.exists(sentinel))
        # No child process ever appeared under the server.
        children = f"/proc/{server.proc.pid}/task/{server.proc.pid}/children"
        if os.path.exists(children):
            with open(children) as f:
                self.assertEqual(f.read().strip(), "")


class FilePermissions(unittest.TestCase):
    def test_private_files_and_dirs_even_with_umask_000(self):
        old = os.umask(0)  # inherited by the child
        try:
            server = ServerProcess(args=["--backend", "local"])
        finally:
            os.umask(old)
        self.addCleanup(server.__exit__, None, None, None)
        server.initialize()
        exercise_tools(server, os.path.join(server.data_dir, "pwned"))

        def check_tree():
            seen_files = 0
            for dirpath, dirs, files in os.walk(server.data_dir):
                mode = stat.S_IMODE(os.lstat(dirpath).st_mode)
                if dirpath != server.data_dir:  # the test made the top dir itself
                    self.assertEqual(mode, 0o700, f"{dirpath} is {oct(mode)}")
                for name in files:
                    path = os.path.join(dirpath, name)
                    mode = stat.S_IMODE(os.lstat(path).st_mode)
                    self.assertEqual(mode, 0o600, f"{path} is {oct(mode)}")
                    seen_files += 1
            return seen_files

        self.assertGreaterEqual(check_tree(), 5)  # db, images, lock files while running
        server.close_stdin()
        server.wait_exit(timeout=30)
        check_tree()

    def test_a_data_dir_the_server_creates_is_0700(self):
        parent = tempfile.mkdtemp(prefix="imgmcp-perm-")
        self.addCleanup(shutil.rmtree, parent, True)
        data = os.path.join(parent, "a", "b", "data")
        old = os.umask(0)
        try:
            server = ServerProcess(args=["--backend", "local"], data_dir=data, cwd=parent)
        finally:
            os.umask(old)
        self.addCleanup(server.__exit__, None, None, None)
        server.initialize()
        for d in (data, os.path.join(parent, "a", "b")):
            self.assertEqual(stat.S_IMODE(os.stat(d).st_mode), 0o700, d)


class RefusesUnusableDataDir(unittest.TestCase):
    """Exits non-zero with a clear stderr message before answering anything. Tests run as root
    in CI, which ignores file modes, so the cases use what root cannot do either, or (a
    read-only directory) run the server as nobody."""

    def setUp(self):
        self.parent = tempfile.mkdtemp(prefix="imgmcp-refuse-")
        self.addCleanup(shutil.rmtree, self.parent, True)

    def assert_refuses(self, data_dir, *message_parts, binary=None, as_user=()):
        """`as_user`: a command prefix that runs `binary` (the one under test by default) as
        another user (setpriv)."""
        initialize = (b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":'
                      b'"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}\n')
        env = {k: v for k, v in os.environ.items() if k != "GEMINI_API_KEY"}
        proc = subprocess.run([*as_user, binary or mcp_harness.binary_path(), "--data-dir",
                               data_dir, "--backend", "local"], input=initialize,
                              capture_output=True, timeout=30, env=env, cwd=self.parent)
        self.assertNotEqual(proc.returncode, 0)
        self.assertEqual(proc.stdout, b"", "answered before refusing to start")
        stderr = proc.stderr.decode("utf-8", "replace")
        self.assertIn("data dir", stderr)
        for part in message_parts:
            self.assertIn(part, stderr)
        return stderr

    def test_path_below_a_regular_file(self):
        blocker = os.path.join(self.parent, "file.txt")
        with open(blocker, "w") as f:
            f.write("x")
        self.assert_refuses(os.path.join(blocker, "sub"), "file.txt", "not a directory")

    def test_file_system_that_refuses_new_entries(self):
        self.assert_refuses("/proc/imgmcp-cannot-exist", "/proc/imgmcp-cannot-exist")

    def test_lock_dir_that_cannot_hold_lock_files(self):
        data = os.path.join(self.parent, "data")
        os.makedirs(data)
        with open(os.path.join(data, "locks"), "w") as f:
            f.write("a file where the lock directory should be")
        self.assert_refuses(data, "locks")

    def test_database_path_that_is_not_a_file(self):
        data = os.path.join(self.parent, "data")
        os.makedirs(os.path.join(data, "imgmcp.db"))
        self.assert_refuses(data, "imgmcp.db")

    def test_read_only_directory(self):
        binary, as_user, parent = None, (), self.parent
        if os.geteuid() == 0:
            # Root ignores directory modes: the server runs as nobody, whose own directory this
            # is, as an unprivileged user's would be; all below /tmp (which nobody may enter),
            # the binary a copy nobody may run wherever the build tree is.
            as_user = (require_tool("setpriv", "util-linux"), "--reuid=65534", "--regid=65534",
                       "--clear-groups")
            parent = tempfile.mkdtemp(prefix="imgmcp-refuse-nobody-", dir="/tmp")
            self.addCleanup(shutil.rmtree, parent, True)
            os.chmod(parent, 0o711)
            binary = os.path.join(parent, "imgmcp")
            shutil.copy2(mcp_harness.binary_path(), binary)
            os.chmod(binary, 0o755)
        data = os.path.join(parent, "ro")
        os.makedirs(data)
        if as_user:
            os.chown(data, 65534, 65534)
        os.chmod(data, 0o500)
        self.addCleanup(os.chmod, data, 0o700)
        self.assert_refuses(data, data, "Permission denied", binary=binary, as_user=as_user)


if __name__ == "__main__":
    unittest.main()
