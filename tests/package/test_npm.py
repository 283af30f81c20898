"""The two npm tarballs as a user installs them: `npm install --offline` into an empty project
(the launcher picks the platform package up as its optional dependency), then `npx imgmcp`
answering --version and an MCP conversation over stdio, its exit code passed through, and
Claude Code (tests/interop_modern's pinned native binary, when installed) configured with
`claude mcp add imgmcp -- npx imgmcp` reporting it Connected."""
import json
import os
import signal
import shutil
import subprocess
import tempfile
import unittest

from package_support import VERSION, artifact, generate_over_stdio

CLAUDE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "interop_modern",
                      "node_modules", "@anthropic-ai", "claude-code-linux-x64", "claude")


@unittest.skipUnless(shutil.which("npm") and shutil.which("npx"), "needs npm")
class NpmPackages(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
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

    def test_npx_imgmcp_serves_mcp_over_stdio(self):
        info, image = generate_over_stdio(self, self.command)
        self.assertEqual(info["serverInfo"]["version"], VERSION)
        self.assertEqual((image["version"], image["backend"]), (1, "local"))

    @unittest.skipUnless(os.path.exists(CLAUDE), "npm ci in tests/interop_modern installs Claude Code")
    def test_claude_code_reports_npx_imgmcp_connected(self):
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
