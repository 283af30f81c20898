"""The linux-arm64 artifacts as shipped, run under qemu-user on this x86-64 machine: the portable
tarball, the .deb's payload and the npm platform package, each unpacked into a fresh prefix. An
arm64 binary runs as `qemu-aarch64-static -L SYSROOT BINARY`, SYSROOT being the arm64 Debian
packages scripts/build-arm64 unpacked ($IMGMCP_ARM64_SYSROOT: the loader and glibc a Debian
arm64 machine has). A short smoke under emulation (about 14 times slower than native): the full
suites run natively.

- the tarball: arm64 ELF files that need glibc alone, at most the stated GLIBC_ version; MCP over
  stdio (initialize, generate and edit on the local backend), a Gemini call against the fake,
  HTTP mode with its network module, and a SIGTERM drain that exits 0;
- the .deb: architecture arm64, `Depends: libc6 (>= V)` with V the programs' highest GLIBC_
  symbol, man pages and the systemd unit, no lintian error, and its imgmcp and imgmcp-cli
  running;
- the MCP Bundle: the x64 bundle's manifest around the arm64 server;
- the npm package @imgmcp/linux-arm64: os linux, cpu arm64, its binary running; the launcher
  (imgmcp) picks it on an arm64 machine.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import unittest
import zipfile

from package_support import (VERSION, artifact, fresh_prefix, generate_over_stdio,
                             initialize_over_http, server_over_stdio)

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from imgmcp_process import HttpProcess  # noqa: E402  (tests/support)
from fake_gemini_process import FakeGemini  # noqa: E402  (tests/support)
from skips import require, require_tool  # noqa: E402  (tests/support)

GLIBC_LIBRARIES = {"libc.so.6", "libm.so.6", "libpthread.so.0", "libdl.so.2", "librt.so.1",
                   "ld-linux-aarch64.so.1"}
HIGHEST_GLIBC = (2, 36)  # as on x86-64 (arc4random); packaging/CMakeLists.txt states it
TEST_KEY = "AIzaTEST-imgmcp-arm64-0a1b2c3d"  # a dummy key the fake accepts


def sysroot():
    root = os.environ.get("IMGMCP_ARM64_SYSROOT", "")
    require(os.path.isfile(os.path.join(root, "lib", "ld-linux-aarch64.so.1")),
            "IMGMCP_ARM64_SYSROOT names no arm64 sysroot (scripts/build-arm64 makes one)")
    return root


def emulated(test, binary):
    """A script that runs the arm64 `binary` under qemu-user (what an arm64 machine runs)."""
    qemu = require_tool("qemu-aarch64-static", "qemu-user-static")
    script = os.path.join(fresh_prefix(test), os.path.basename(binary))
    with open(script, "w") as f:
        f.write(f'#!/bin/sh\nexec "{qemu}" -L "{sysroot()}" "{binary}" "$@"\n')
    os.chmod(script, 0o755)
    return script


def glibc_needs(*paths):
    """(NEEDED libraries, highest GLIBC_ version) of ELF files, read with readelf."""
    dynamic = subprocess.run(["readelf", "-d", "-W", *paths], check=True, capture_output=True,
                             text=True, timeout=60).stdout
    needed = set(re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", dynamic))
    versions = subprocess.run(["readelf", "-V", "-W", *paths], check=True, capture_output=True,
                              text=True, timeout=60).stdout
    highest = max(tuple(int(p) for p in v.split("."))
                  for v in re.findall(r"GLIBC_([0-9.]+)\b", versions))
    return needed, highest


def machine_of(path):
    header = subprocess.run(["readelf", "-h", path], check=True, capture_output=True, text=True,
                            timeout=30).stdout
    return re.search(r"Machine:\s+(.+)", header).group(1).strip()


def untar(test, name):
    prefix = fresh_prefix(test)
    with tarfile.open(artifact(name)) as tar:
        tar.extractall(prefix)
    return prefix


class Arm64Tarball(unittest.TestCase):
    def setUp(self):
        root = os.path.join(untar(self, f"imgmcp-{VERSION}-linux-arm64.tar.gz"),
                            f"imgmcp-{VERSION}-linux-arm64")
        self.binary = os.path.join(root, "bin", "imgmcp")
        self.module = os.path.join(root, "lib", "imgmcp", "libimgmcp_net.so")
        self.command = emulated(self, self.binary)

    def test_arm64_files_that_need_glibc_alone(self):
        for path in (self.binary, self.module):
            self.assertEqual(machine_of(path), "AArch64")
        needed, highest = glibc_needs(self.binary, self.module)
        self.assertLessEqual(needed, GLIBC_LIBRARIES)
        self.assertEqual(highest, HIGHEST_GLIBC)

    def test_stdio_generate_and_edit_on_the_local_backend(self):
        server = server_over_stdio(self, self.command)
        self.assertEqual(server.initialize()["serverInfo"]["version"], VERSION)
        for tool, args, version in (("generate_image", {"prompt": "solid red"}, 1),
                                    ("edit_image", {"prompt": "invert"}, 2)):
            answer = server.call_tool(tool, dict(args, session_id="arm", inline="none"),
                                      timeout=120)
            self.assertFalse(answer["result"].get("isError"), answer)
            self.assertEqual(answer["result"]["structuredContent"]["version"], version)

    def test_a_gemini_call_against_the_fake(self):
        fake = FakeGemini()
        self.addCleanup(fake.close)
        _, image = generate_over_stdio(
            self, self.command, args=("--backend", "gemini"),
            env={"GEMINI_API_KEY": TEST_KEY, "GEMINI_BASE_URL": fake.base_url})
        self.assertEqual((image["version"], image["backend"]), (1, "gemini"))

    def test_http_mode_and_a_sigterm_drain(self):
        server = HttpProcess("--backend", "local", binary=self.command, start_timeout=120)
        try:
            status, text = initialize_over_http(server)
            self.assertEqual(status, 200, text)
            self.assertIn(f'"version":"{VERSION}"', text.replace(" ", ""))
            self.assertEqual(server.stop(timeout=60), 0, server.stderr)
            self.assertIn("SIGTERM", server.stderr)
        finally:
            server.close(check=False)


class Arm64Deb(unittest.TestCase):
    def setUp(self):
        self.deb = artifact(f"imgmcp_{VERSION}_arm64.deb")
        self.prefix = fresh_prefix(self)
        subprocess.run(["dpkg-deb", "-x", self.deb, self.prefix], check=True, timeout=60)

    def field(self, name):
        return subprocess.run(["dpkg-deb", "-f", self.deb, name], check=True, capture_output=True,
                              text=True, timeout=30).stdout.strip()

    def test_control_names_arm64_and_the_glibc_its_programs_need(self):
        self.assertEqual(self.field("Architecture"), "arm64")
        self.assertEqual(self.field("Version"), VERSION)
        programs = [os.path.join(self.prefix, "usr", "bin", name) for name in ("imgmcp",
                                                                              "imgmcp-cli")]
        needed, highest = glibc_needs(
            *programs, os.path.join(self.prefix, "usr", "lib", "imgmcp", "libimgmcp_net.so"))
        self.assertLessEqual(needed, GLIBC_LIBRARIES)
        self.assertEqual(self.field("Depends"), f"libc6 (>= {'.'.join(map(str, highest))})")
        for page in ("imgmcp.1.gz", "imgmcp-cli.1.gz"):
            self.assertTrue(os.path.isfile(os.path.join(self.prefix, "usr", "share", "man",
                                                        "man1", page)), page)
        self.assertTrue(os.path.isfile(os.path.join(self.prefix, "usr", "lib", "systemd",
                                                    "system", "imgmcp.service")))

    def test_lintian_reports_no_errors(self):
        require_tool("lintian")
        run = subprocess.run(["lintian", "--fail-on", "error", self.deb], capture_output=True,
                             text=True, timeout=180)
        self.assertEqual(run.returncode, 0, run.stdout + run.stderr)

    def test_its_programs_run(self):
        imgmcp = emulated(self, os.path.join(self.prefix, "usr", "bin", "imgmcp"))
        _, image = generate_over_stdio(self, imgmcp)
        self.assertEqual(image["version"], 1)
        cli = emulated(self, os.path.join(self.prefix, "usr", "bin", "imgmcp-cli"))
        run = subprocess.run([cli, "--version"], capture_output=True, text=True, timeout=120)
        self.assertEqual((run.returncode, run.stdout.strip()), (0, f"imgmcp-cli {VERSION}"),
                         run.stderr)


class Arm64Bundle(unittest.TestCase):
    def test_the_bundle_carries_the_arm64_server_with_the_same_manifest(self):
        bundles = {}
        for arch in ("x64", "arm64"):
            with zipfile.ZipFile(artifact(f"imgmcp-{VERSION}-linux-{arch}.mcpb")) as bundle:
                bundles[arch] = json.loads(bundle.read("manifest.json"))
                if arch == "arm64":
                    prefix = fresh_prefix(self)
                    bundle.extractall(prefix)
        self.assertEqual(bundles["arm64"], bundles["x64"])
        binary = os.path.join(prefix, "server", "bin", "imgmcp")
        self.assertEqual(machine_of(binary), "AArch64")
        os.chmod(binary, 0o755)  # zipfile does not restore modes
        run = subprocess.run([emulated(self, binary), "--version"], capture_output=True,
                             text=True, timeout=120)
        self.assertEqual((run.returncode, run.stdout.strip()), (0, f"imgmcp {VERSION}"),
                         run.stderr)


class Arm64Npm(unittest.TestCase):
    def setUp(self):
        self.prefix = untar(self, f"imgmcp-linux-arm64-{VERSION}.tgz")
        self.package = os.path.join(self.prefix, "package")

    def test_the_platform_package_is_for_linux_arm64_and_runs(self):
        with open(os.path.join(self.package, "package.json")) as f:
            manifest = json.load(f)
        self.assertEqual((manifest["name"], manifest["os"], manifest["cpu"]),
                         ("@imgmcp/linux-arm64", ["linux"], ["arm64"]))
        _, image = generate_over_stdio(self, emulated(self, os.path.join(self.package, "bin",
                                                                         "imgmcp")))
        self.assertEqual(image["version"], 1)

    def test_the_launcher_picks_it_on_an_arm64_machine(self):
        node = require_tool("node", "nodejs")
        project = fresh_prefix(self)
        scoped = os.path.join(project, "node_modules", "@imgmcp")
        os.makedirs(scoped)
        shutil.copytree(self.package, os.path.join(scoped, "linux-arm64"), symlinks=True)
        launcher_root = untar(self, f"imgmcp-{VERSION}.tgz")
        with open(os.path.join(launcher_root, "package", "package.json")) as f:
            self.assertIn("@imgmcp/linux-arm64", json.load(f)["optionalDependencies"])
        shutil.copytree(os.path.join(launcher_root, "package"),
                        os.path.join(project, "node_modules", "imgmcp"))
        arm64 = os.path.join(project, "as-arm64.js")  # what node reports on an arm64 machine
        with open(arm64, "w") as f:
            f.write("Object.defineProperty(process, 'arch', { value: 'arm64' });\n")
        run = subprocess.run([node, "--require", arm64,
                              os.path.join(project, "node_modules", "imgmcp", "bin", "imgmcp.js"),
                              "--version"], cwd=project, capture_output=True, timeout=60)
        # This x86-64 machine cannot execute the arm64 binary itself (execvp hands it to the
        # shell, which fails on it): the messages name the binary the launcher started.
        stderr = run.stderr.decode("utf-8", "replace")
        self.assertNotEqual(run.returncode, 0)
        self.assertIn(os.path.join("@imgmcp", "linux-arm64", "bin", "imgmcp"), stderr)
        self.assertNotIn("linux-x64", stderr)


if __name__ == "__main__":
    unittest.main()
