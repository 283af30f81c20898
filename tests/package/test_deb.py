"""The .deb as a user receives it: lintian's verdict, its control fields, and its files unpacked
with dpkg-deb -x into a fresh prefix, where the installed binary answers --version and an MCP
conversation over stdio, and runs the README's demo scenario (demo/run_demo.py). Its systemd
unit: hardened to an exposure of 2.5 or less by `systemd-analyze security`, and its system call
filter and address families allowing everything the installed server does over HTTP with the
Gemini backend (seen by strace)."""
import gzip
import os
import re
import signal
import subprocess
import sys
import tempfile
import unittest

from package_support import VERSION, artifact, fresh_prefix, generate_over_stdio
from skips import require, require_tool  # tests/support
from replica_support import LegacyClient, structured  # tests/integration
from imgmcp_process import HttpProcess  # tests/support
from fake_gemini_support import TEST_KEY, FakeGemini  # tests/integration


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

    def test_lintian_reports_no_errors(self):
        run = subprocess.run([require_tool("lintian"), "--fail-on", "error", deb()],
                             capture_output=True, text=True, timeout=240)
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

    def test_demo_scenario_runs_against_the_installed_binary(self):
        require(os.environ.get("IMGMCP_CONTACT_SHEET"),
                "needs the demo's helper: ctest sets IMGMCP_CONTACT_SHEET")
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



def unpacked(test):
    """The .deb unpacked into a fresh prefix: (prefix, the unit's path, its settings)."""
    prefix = fresh_prefix(test)
    subprocess.run(["dpkg-deb", "-x", deb(), prefix], check=True, timeout=60)
    path = os.path.join(prefix, "usr/lib/systemd/system/imgmcp.service")
    with open(path) as f:
        unit = dict(line.split("=", 1) for line in f.read().splitlines()
                    if "=" in line and not line.startswith("#"))
    return prefix, path, unit


def system_call_groups():
    """systemd-analyze's system call groups: {"@name": [members: calls and "@groups"]}."""
    listing = subprocess.run([require_tool("systemd-analyze", "systemd"),
                              "syscall-filter"], capture_output=True,
                             text=True, check=True, timeout=60).stdout
    groups, current = {}, None
    for line in listing.splitlines():
        if line.startswith("@"):
            current = groups.setdefault(line.strip(), [])
        elif line.startswith("    ") and current is not None and not line.strip().startswith("#"):
            current.append(line.strip())
    return groups


def allowed_calls(filter_value):
    """The system calls an allow-list SystemCallFilter= value lets through."""
    groups = system_call_groups()
    allowed, todo = set(), filter_value.split()
    while todo:
        name = todo.pop()
        if name.startswith("@"):
            todo.extend(groups[name])
        else:
            allowed.add(name)
    return allowed


class SystemdUnit(unittest.TestCase):
    def test_runs_http_mode_as_a_dynamic_user_in_its_state_directory_and_drains_on_sigterm(self):
        _, _, unit = unpacked(self)
        self.assertEqual(unit["DynamicUser"], "yes")
        self.assertEqual(unit["StateDirectory"], "imgmcp")
        self.assertEqual(unit["Environment"], "IMGMCP_DATA_DIR=%S/imgmcp")
        # The working directory is a root of {path} reads and save_to writes (never into the
        # data dir): the state directory, not systemd's default /.
        self.assertEqual(unit["WorkingDirectory"], "%S/imgmcp")
        self.assertEqual(unit["KillSignal"], "SIGTERM")
        self.assertTrue(unit["ExecStart"].startswith("/usr/bin/imgmcp --http "))

    def test_is_hardened(self):
        _, _, unit = unpacked(self)
        for key, value in (("SystemCallFilter", "@system-service"),
                           ("SystemCallArchitectures", "native"), ("RestrictNamespaces", "yes"),
                           ("RestrictRealtime", "yes"), ("ProtectClock", "yes"),
                           ("ProtectKernelLogs", "yes"), ("ProtectHostname", "yes"),
                           ("ProtectProc", "invisible"), ("ProcSubset", "pid"),
                           ("CapabilityBoundingSet", ""), ("PrivateUsers", "yes"),
                           ("UMask", "0077"), ("ProtectHome", "yes"),
                           ("ProtectSystem", "strict"), ("NoNewPrivileges", "yes"),
                           ("MemoryDenyWriteExecute", "yes")):
            self.assertEqual(unit.get(key), value, key)
        # What the server needs: TCP to listen and to reach Gemini, Unix sockets.
        self.assertEqual(set(unit["RestrictAddressFamilies"].split()),
                         {"AF_INET", "AF_INET6", "AF_UNIX"})

    def test_systemd_analyze_rates_its_exposure_2_5_or_less(self):
        _, path, _ = unpacked(self)
        run = subprocess.run([require_tool("systemd-analyze", "systemd"), "security",
                              "--offline=true", path],
                             capture_output=True, text=True, timeout=60)
        found = re.search(r"Overall exposure level for imgmcp\.service: (\d+\.\d+)",
                          run.stdout + run.stderr)
        self.assertIsNotNone(found, run.stdout + run.stderr)
        self.assertLessEqual(float(found.group(1)), 2.5, run.stdout)

    def test_its_filters_allow_what_the_installed_server_does(self):
        prefix, _, unit = unpacked(self)
        self.assertIn("SystemCallFilter", unit, "the unit filters no system calls")
        allowed = allowed_calls(unit["SystemCallFilter"])
        families = set(unit["RestrictAddressFamilies"].split())
        calls, sockets = self.traced_http_server(prefix)
        self.assertIn("flock", calls)  # the trace saw the store's turns: it is not empty
        self.assertEqual(sorted(calls - allowed), [],
                         "system calls the unit's SystemCallFilter refuses")
        self.assertEqual(sorted(sockets - families), [],
                         "address families RestrictAddressFamilies refuses")

    def traced_http_server(self, prefix):
        """The installed server over HTTP, as the unit runs it (its data dir its working
        directory), under strace -f, through a Gemini-backed generate and edit, a get with a
        preview, /metrics and a SIGTERM drain. Returns (system calls made, socket families)."""
        fake = FakeGemini()
        self.addCleanup(fake.close)
        trace = os.path.join(prefix, "strace.out")
        wrapper = os.path.join(prefix, "traced-imgmcp")
        with open(wrapper, "w") as f:
            f.write(f'#!/bin/sh\nexec {require_tool("strace")} -f -qq -o {trace} '
                    f'{prefix}/usr/bin/imgmcp "$@"\n')
        os.chmod(wrapper, 0o755)
        data = tempfile.mkdtemp(prefix="imgmcp-unit-", dir=prefix)
        server = HttpProcess("--backend", "gemini", binary=wrapper, data_dir=data, env={
            "GEMINI_API_KEY": TEST_KEY, "GEMINI_BASE_URL": fake.base_url}, start_timeout=60)
        self.addCleanup(server.close, 30.0, False)
        client = LegacyClient(server.port)
        structured(client.call_tool("generate_image", {"session_id": "unit", "prompt": "white",
                                                       "inline": "none"}))
        structured(client.call_tool("edit_image", {"session_id": "unit", "prompt": "invert",
                                                   "inline": "none"}))
        structured(client.call_tool("get_image", {"session_id": "unit"}))
        conn = server.connection()
        conn.request("GET", "/metrics", headers={"Host": f"127.0.0.1:{server.port}"})
        self.assertEqual(conn.getresponse().status, 200)
        conn.close()
        with open(f"/proc/{server.proc.pid}/task/{server.proc.pid}/children") as f:
            traced = int(f.read().split()[0])  # strace's child: the server
        os.kill(traced, signal.SIGTERM)
        self.assertEqual(server.proc.wait(timeout=60), 0, server.stderr)
        calls, sockets = set(), set()
        with open(trace) as f:
            for line in f:
                named = re.match(r"\d+\s+(?:<\.\.\. )?([a-z0-9_]+)(?:\(| resumed>)", line)
                if named:
                    calls.add(named.group(1))
                family = re.search(r"\bsocket\((AF_\w+)", line)
                if family:
                    sockets.add(family.group(1))
        return calls, sockets


if __name__ == "__main__":
    unittest.main()
