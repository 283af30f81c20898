"""The two npm tarballs as a user installs them: `npm install --offline` into an empty project
(the launcher picks the platform package up as its optional dependency), then `npx imgmcp`
answering --version and an MCP conversation over stdio, its exit code passed through, signals
reaching the server once whoever sends them (so one Ctrl-C drains: the call in flight is
answered), and Claude Code (tests/interop_modern's pinned native binary, when installed)
configured with `claude mcp add imgmcp -- npx imgmcp` reporting it Connected."""
import fcntl
import json
import os
import signal
import shutil
import subprocess
import tempfile
import unittest

from package_support import VERSION, artifact, generate_over_stdio, server_over_stdio
from skips import require, require_tool  # tests/support, on sys.path through package_support

CLAUDE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "interop_modern",
                      "node_modules", "@anthropic-ai", "claude-code-linux-x64", "claude")


def child_of(pid):
    """The one process whose parent is `pid` (the launcher's imgmcp)."""
    children = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
            except OSError:
                continue  # ended meanwhile
            if int(fields[1]) == pid:
                children.append(int(entry))
    if len(children) != 1:
        raise AssertionError(f"process {pid} has children {children}, not one")
    return children[0]


def process_group_of(pid):
    with open(f"/proc/{pid}/stat") as f:
        return int(f.read().rsplit(")", 1)[1].split()[2])


class NpmPackages(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        require_tool("npm")
        require_tool("npx", "npm")
        cls.project = tempfile.mkdtemp(prefix="imgmcp-npm-")
        cls.addClassCleanup(shutil.rmtree, cls.project, True)
        self = cls
        self.npm_env = dict(os.environ, npm_config_cache=os.path.join(self.project, ".npm-cache"),
                            npm_config_update_notifier="false")
        subprocess.run(["npm", "init", "-y"], cwd=self.project, env=self.npm_env, check=True,
                       capture_output=True, timeout=60)
        subprocess.run(["npm", "install", "--offline", "--no-audit", "--no-fund",
                        artifact(f"imgmcp-linux-x64-{VERSION}.tgz"),
                        artifact(f"imgmcp-{VERSION}.tgz")],
                       cwd=self.project, env=self.npm_env, check=True, capture_output=True,
                       timeout=120)
        # What an MCP client runs: `npx imgmcp ARGS`, here from the project.
        self.command = os.path.join(self.project, "npx-imgmcp")
        with open(self.command, "w") as f:
            f.write(f'#!/bin/sh\ncd "{self.project}" && exec npx --offline imgmcp "$@"\n')
        os.chmod(self.command, 0o755)

    def npx(self, *args):
        return subprocess.run([self.command, *args], env=self.npm_env, capture_output=True,
                              text=True, timeout=60)

    def test_npx_imgmcp_answers_version(self):
        run = self.npx("--version")
        self.assertEqual((run.returncode, run.stdout.strip()), (0, f"imgmcp {VERSION}"),
                         run.stderr)

    def test_npx_imgmcp_passes_the_exit_code_through(self):
        run = self.npx("--no-such-flag")
        self.assertEqual(run.returncode, 2, run.stderr)
        self.assertIn("--no-such-flag", run.stderr)

    def test_the_launcher_forwards_sigterm_and_the_server_drains_and_exits_0(self):
        launcher = os.path.join(self.project, "node_modules", ".bin", "imgmcp")
        proc = subprocess.Popen([launcher, "--backend", "local", "--data-dir",
                                 os.path.join(self.project, "signal-data")],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, env=self.npm_env)
        self.addCleanup(lambda: proc.poll() is None and proc.kill())
        proc.stdin.write(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "imgmcp-tests", "version": "0"}}}).encode() + b"\n")
        proc.stdin.flush()
        answer = json.loads(proc.stdout.readline())  # the server is up behind the launcher
        self.assertEqual(answer["result"]["serverInfo"]["version"], VERSION)
        proc.send_signal(signal.SIGTERM)  # to the launcher (node), which forwards it
        code = proc.wait(timeout=30)
        stderr = proc.stderr.read().decode()
        self.assertEqual(code, 0, stderr)
        self.assertIn("SIGTERM", stderr)  # the server's own drain log line

    def start_call_held_in_its_turn(self):
        """The installed launcher, as the leader of a process group of its own (as a terminal or
        an MCP client that ends its server with kill(-pgid) starts it), with an edit_image call
        in flight: it waits for its session's turn, which the test holds (the session's flock,
        as another imgmcp process would). Returns (server, release)."""
        launcher = os.path.join(self.project, "node_modules", ".bin", "imgmcp")
        leader = os.path.join(self.project, "imgmcp-own-group")
        with open(leader, "w") as f:  # setsid(1) execs the launcher in the same process
            f.write(f'#!/bin/sh\nexec setsid "{launcher}" "$@"\n')
        os.chmod(leader, 0o755)
        server = server_over_stdio(self, leader, ["--backend", "local", "--drain-timeout", "30"])
        server.initialize()
        first = server.call_tool("generate_image", {"session_id": "held", "prompt": "solid red",
                                                    "inline": "none"}, timeout=60)
        self.assertEqual(first["result"]["structuredContent"]["version"], 1, first)
        turn = os.open(os.path.join(server.data_dir, "locks", "held.lock"),
                       os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        self.addCleanup(os.close, turn)
        fcntl.flock(turn, fcntl.LOCK_EX)
        server.send({"jsonrpc": "2.0", "id": 900, "method": "tools/call", "params": {
            "name": "edit_image", "_meta": {"progressToken": "held"},
            "arguments": {"session_id": "held", "prompt": "invert", "inline": "none"}}})
        server.wait_for(lambda m: m.get("method") == "notifications/progress" and
                        "waiting for another imgmcp process" in m["params"].get("message", ""),
                        timeout=30)
        return server, lambda: fcntl.flock(turn, fcntl.LOCK_UN)

    def assert_drains_and_answers(self, server, release):
        self.assertIn("SIGINT: no more input is read",
                      server.wait_for_stderr("SIGINT: no more input is read"))
        release()
        answer = server.wait_for(lambda m: m.get("id") == 900, timeout=30)
        self.assertEqual(answer["result"]["structuredContent"]["version"], 2, answer)
        self.assertEqual(server.wait_exit(30), 0, server.stderr)
        self.assertNotIn("signalled again", server.stderr)

    def test_one_ctrl_c_to_the_process_group_drains_and_the_call_in_flight_is_answered(self):
        # A terminal's Ctrl-C signals every process of its foreground process group at once;
        # which acts first is up to the scheduler. Here the launcher acts last: it is stopped
        # until the server, if the Ctrl-C reached it too, has acted on its copy.
        server, release = self.start_call_held_in_its_turn()
        launcher = server.proc.pid
        imgmcp = child_of(launcher)
        os.kill(launcher, signal.SIGSTOP)
        os.waitpid(launcher, os.WUNTRACED)  # returns once it is stopped
        os.killpg(launcher, signal.SIGINT)
        if process_group_of(imgmcp) == launcher:
            server.wait_for_stderr("SIGINT: no more input is read")
        os.kill(launcher, signal.SIGCONT)
        self.assert_drains_and_answers(server, release)

    def test_a_signal_that_reaches_the_launcher_twice_is_forwarded_once(self):
        # Under `npx` where /bin/sh execs the launcher (bash does), a Ctrl-C reaches it from the
        # terminal and again from npm, which forwards what it gets to its child.
        server, release = self.start_call_held_in_its_turn()
        os.killpg(server.proc.pid, signal.SIGINT)
        os.kill(server.proc.pid, signal.SIGINT)
        self.assert_drains_and_answers(server, release)

    def test_a_second_ctrl_c_later_still_exits_at_once(self):
        server, _ = self.start_call_held_in_its_turn()
        os.killpg(server.proc.pid, signal.SIGINT)
        server.wait_for_stderr("SIGINT: no more input is read")
        # The user's second Ctrl-C comes later than one event's copies (the launcher's repeat
        # window): sent until the server says it exits, each after waiting for that line.
        for _ in range(20):
            try:
                os.killpg(server.proc.pid, signal.SIGINT)
            except ProcessLookupError:
                break  # the launcher is gone: it followed the server out
            if "signalled again: exiting now" in server.wait_for_stderr("signalled again", 1.0):
                break
        self.assertIn("signalled again: exiting now", server.stderr)
        self.assertEqual(server.wait_exit(30), 0, server.stderr)
        with self.assertRaises(EOFError):  # the held call died with the process
            server.wait_for(lambda m: m.get("id") == 900, timeout=30)

    def test_npx_imgmcp_serves_mcp_over_stdio(self):
        info, image = generate_over_stdio(self, self.command)
        self.assertEqual(info["serverInfo"]["version"], VERSION)
        self.assertEqual((image["version"], image["backend"]), (1, "local"))

    def test_claude_code_reports_npx_imgmcp_connected(self):
        require(os.path.exists(CLAUDE), "npm ci in tests/interop_modern installs Claude Code")
        home = os.path.join(self.project, "claude-home")
        os.makedirs(home, exist_ok=True)
        env = {"PATH": os.environ["PATH"], "HOME": home, "TMPDIR": os.environ.get("TMPDIR", "/tmp"),
               "DISABLE_AUTOUPDATER": "1", "DISABLE_TELEMETRY": "1",
               "DISABLE_ERROR_REPORTING": "1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
               "npm_config_offline": "true", "npm_config_cache": self.npm_env["npm_config_cache"],
               "npm_config_update_notifier": "false"}

        def claude(*args):
            return subprocess.run([CLAUDE, *args], cwd=self.project, env=env, capture_output=True,
                                  text=True, timeout=120)

        add = claude("mcp", "add", "imgmcp", "--", "npx", "imgmcp", "--backend", "local")
        self.assertEqual(add.returncode, 0, add.stdout + add.stderr)
        listed = claude("mcp", "list")
        self.assertEqual(listed.returncode, 0, listed.stdout + listed.stderr)
        self.assertRegex(listed.stdout, r"(?m)^imgmcp: npx imgmcp .* - ✔ Connected$", listed.stdout)


if __name__ == "__main__":
    unittest.main()
