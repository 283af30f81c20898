"""The two npm tarballs as a user installs them: `npm install --offline` into an empty project
(the launcher picks the platform package up as its optional dependency), then `npx imgmcp`
answering --version and an MCP conversation over stdio, its exit code passed through."""
import os
import shutil
import subprocess
import tempfile
import unittest

from package_support import VERSION, artifact, generate_over_stdio


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

    def test_npx_imgmcp_serves_mcp_over_stdio(self):
        info, image = generate_over_stdio(self, self.command)
        self.assertEqual(info["serverInfo"]["version"], VERSION)
        self.assertEqual((image["version"], image["backend"]), (1, "local"))


if __name__ == "__main__":
    unittest.main()
