"""The portable build as shipped in imgmcp-<version>-linux-x64.tar.gz: unpacked into a fresh
prefix, it needs nothing but glibc (ldd, and the GLIBC_ symbol versions it asks for), serves MCP
over stdio there, and loads its network module beside it for --http."""
import os
import re
import subprocess
import sys
import tarfile
import unittest

from package_support import (VERSION, artifact, fresh_prefix, generate_over_stdio,
                             initialize_over_http)

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from imgmcp_process import HttpProcess  # noqa: E402  (tests/support)

GLIBC_LIBRARIES = {"linux-vdso.so.1", "libc.so.6", "libm.so.6", "libpthread.so.0", "libdl.so.2",
                   "librt.so.1", "ld-linux-x86-64.so.2"}
HIGHEST_GLIBC = (2, 36)  # Debian 12's; the README states it


class PortableTarball(unittest.TestCase):
    def setUp(self):
        self.prefix = fresh_prefix(self)
        with tarfile.open(artifact(f"imgmcp-{VERSION}-linux-x64.tar.gz")) as tar:
            tar.extractall(self.prefix)
        self.root = os.path.join(self.prefix, f"imgmcp-{VERSION}-linux-x64")
        self.binary = os.path.join(self.root, "bin", "imgmcp")
        self.module = os.path.join(self.root, "lib", "imgmcp", "libimgmcp_net.so")

    def test_ldd_lists_only_glibc(self):
        for path in (self.binary, self.module):
            out = subprocess.run(["ldd", path], check=True, capture_output=True, text=True,
                                 timeout=30).stdout
            names = {os.path.basename(line.split()[0]) for line in out.splitlines() if line.strip()}
            self.assertTrue(names, out)
            self.assertLessEqual(names, GLIBC_LIBRARIES, f"{path}:\n{out}")

    def test_highest_glibc_symbol_version_is_the_stated_one(self):
        out = subprocess.run(["objdump", "-T", self.binary, self.module], check=True,
                             capture_output=True, text=True, timeout=60).stdout
        versions = {tuple(int(p) for p in v.split("."))
                    for v in re.findall(r"GLIBC_([0-9.]+)\b", out)}
        self.assertEqual(max(versions), HIGHEST_GLIBC)
        self.assertNotIn("GLIBCXX_", out)  # libstdc++ is inside
        self.assertNotIn("CXXABI_", out)

    def test_serves_stdio_from_the_prefix(self):
        info, image = generate_over_stdio(self, self.binary)
        self.assertEqual(info["serverInfo"]["version"], VERSION)
        self.assertEqual((image["version"], image["backend"]), (1, "local"))

    def test_http_mode_loads_the_module_beside_it(self):
        with HttpProcess("--backend", "local", binary=self.binary) as server:
            with open(f"/proc/{server.proc.pid}/maps") as f:
                maps = f.read()
            self.assertIn(self.module, maps)
            self.assertNotIn("libssl.so", maps)  # OpenSSL is inside the module
            status, text = initialize_over_http(server)
            self.assertEqual(status, 200, text)
            self.assertIn(f'"version":"{VERSION}"', text.replace(" ", ""))


if __name__ == "__main__":
    unittest.main()
