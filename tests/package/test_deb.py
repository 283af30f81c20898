"""The .deb as a user receives it: lintian's verdict, its control fields, and its files unpacked
with dpkg-deb -x into a fresh prefix, where the installed binary answers --version and an MCP
conversation over stdio, and runs the README's demo scenario (demo/run_demo.py)."""
import gzip
import os
import shutil
import subprocess
import sys
import unittest

from package_support import VERSION, artifact, fresh_prefix, generate_over_stdio


def deb():
    return artifact(f"imgmcp_{VERSION}_amd64.deb")


class DebPackage(unittest.TestCase):
    def field(self, name):
        return subprocess.run(["dpkg-deb", "-f", deb(), name], check=True, capture_output=True,
                              text=True, timeout=30).stdout.strip()

    def test_control_fields_name_the_version_and_the_libraries_the_binaries_need(self):
        self.assertEqual(self.field("Version"), VERSION)
        self.assertEqual(self.field("Architecture"), "amd64")
        depends = self.field("Depends")
        for package in ("libc6", "libsqlite3-0", "libssl3", "libcpp-httplib0.11",
                        "libstdc++6"):
            self.assertIn(package, depends)
        self.assertNotIn("libpq", depends)  # loaded on first use: only suggested
        self.assertIn("libpq5", self.field("Suggests"))

    @unittest.skipUnless(shutil.which("lintian"), "lintian is not installed (scripts/setup)")
    def test_lintian_reports_no_errors(self):
        run = subprocess.run(["lintian", "--fail-on", "error", deb()], capture_output=True,
                             text=True, timeout=240)
        self.assertEqual(run.returncode, 0, run.stdout + run.stderr)
        self.assertNotIn("\nE: ", "\n" + run.stdout)

    def test_unpacked_binary_runs_from_the_prefix(self):
        prefix = fresh_prefix(self)
        subprocess.run(["dpkg-deb", "-x", deb(), prefix], check=True, timeout=60)
        binary = os.path.join(prefix, "usr", "bin", "imgmcp")
        for path in ("usr/bin/imgmcp-cli", "usr/lib/imgmcp/libimgmcp_net.so",
                     "usr/share/doc/imgmcp/copyright", "usr/lib/systemd/system/imgmcp.service"):
            self.assertTrue(os.path.isfile(os.path.join(prefix, path)), path)
        version = subprocess.run([binary, "--version"], check=True, capture_output=True,
                                 text=True, timeout=30).stdout.strip()
        self.assertEqual(version, f"imgmcp {VERSION}")
        info, image = generate_over_stdio(self, binary)
        self.assertEqual(info["serverInfo"]["version"], VERSION)
        self.assertEqual((image["version"], image["backend"]), (1, "local"))
        self.assertTrue(os.path.isfile(image["path"]))

    @unittest.skipUnless(os.environ.get("IMGMCP_CONTACT_SHEET"), "needs the demo's helper (ctest)")
    def test_demo_scenario_runs_against_the_installed_binary(self):
        prefix = fresh_prefix(self)
        subprocess.run(["dpkg-deb", "-x", deb(), prefix], check=True, timeout=60)
        out = os.path.join(prefix, "demo-out")
        demo = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "demo",
                            "run_demo.py")
        env = {k: v for k, v in os.environ.items() if k not in ("GEMINI_API_KEY", "IMGMCP_BIN")}
        run = subprocess.run([sys.executable, demo, "--binary",
                              os.path.join(prefix, "usr", "bin", "imgmcp"), "--contact-sheet-tool",
                              os.environ["IMGMCP_CONTACT_SHEET"], "--out", out],
                             env=env, capture_output=True, text=True, timeout=180)
        self.assertEqual(run.returncode, 0, run.stdout + run.stderr)
        with open(os.path.join(out, "report.md")) as f:
            report = f.read()
        self.assertIn(f"imgmcp {VERSION}", report)
        self.assertIn("- [x] history is versions 1..21", report)
        self.assertNotIn("- [ ]", report)

    def test_man_page_is_generated_from_help(self):
        prefix = fresh_prefix(self)
        subprocess.run(["dpkg-deb", "-x", deb(), prefix], check=True, timeout=60)
        with gzip.open(os.path.join(prefix, "usr/share/man/man1/imgmcp.1.gz"), "rt") as f:
            page = f.read()
        self.assertIn(f"imgmcp {VERSION}", page)
        self.assertIn(r"\fB\-\-data\-dir\fR", page)  # every flag of --help
        self.assertIn("imgmcp — MCP server", page)

    def test_systemd_unit_runs_http_mode_as_a_dynamic_user_and_drains_on_sigterm(self):
        prefix = fresh_prefix(self)
        subprocess.run(["dpkg-deb", "-x", deb(), prefix], check=True, timeout=60)
        with open(os.path.join(prefix, "usr/lib/systemd/system/imgmcp.service")) as f:
            unit = dict(line.split("=", 1) for line in f.read().splitlines()
                        if "=" in line and not line.startswith("#"))
        self.assertEqual(unit["DynamicUser"], "yes")
        self.assertEqual(unit["StateDirectory"], "imgmcp")
        self.assertEqual(unit["KillSignal"], "SIGTERM")
        self.assertTrue(unit["ExecStart"].startswith("/usr/bin/imgmcp --http "))


if __name__ == "__main__":
    unittest.main()
