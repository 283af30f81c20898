"""The MCP Bundle as Claude Desktop receives it: imgmcp-<version>-linux-x64.mcpb unpacked into a
fresh directory, its manifest valid for `mcpb validate` (@anthropic-ai/mcpb, from this folder's
lockfile), and the server launched exactly as the manifest's mcp_config says — ${__dirname} and
${user_config.*} substituted as the host would — answering initialize and generate_image with
the tools the manifest lists."""
import json
import os
import shlex
import subprocess
import unittest
import zipfile

from package_support import VERSION, artifact, fresh_prefix, generate_over_stdio
from skips import require  # tests/support, on sys.path through package_support

MCPB = os.path.join(os.path.dirname(os.path.abspath(__file__)), "node_modules", ".bin", "mcpb")


def substitute(value, variables):
    for name, replacement in variables.items():
        value = value.replace("${" + name + "}", replacement)
    return value


class McpBundle(unittest.TestCase):
    def setUp(self):
        self.dir = fresh_prefix(self)
        with zipfile.ZipFile(artifact(f"imgmcp-{VERSION}-linux-x64.mcpb")) as bundle:
            for info in bundle.infolist():
                path = bundle.extract(info, self.dir)
                os.chmod(path, (info.external_attr >> 16) & 0o777 or 0o644)
        with open(os.path.join(self.dir, "manifest.json")) as f:
            self.manifest = json.load(f)

    def test_manifest_is_a_valid_binary_bundle_of_this_version(self):
        self.assertEqual(self.manifest["manifest_version"], "0.4")
        self.assertEqual(self.manifest["version"], VERSION)
        self.assertEqual(self.manifest["server"]["type"], "binary")
        self.assertTrue(self.manifest["user_config"]["gemini_api_key"]["sensitive"])
        self.assertEqual(self.manifest["user_config"]["data_dir"]["type"], "directory")
        require(os.path.exists(MCPB), "npm ci in tests/package installs mcpb")
        run = subprocess.run([MCPB, "validate", os.path.join(self.dir, "manifest.json")],
                             capture_output=True, text=True, timeout=60)
        self.assertEqual(run.returncode, 0, run.stdout + run.stderr)

    def test_launched_as_the_manifest_says_it_serves_the_listed_tools(self):
        config = self.manifest["server"]["mcp_config"]
        data_dir = os.path.join(self.dir, "user-data")
        variables = {"__dirname": self.dir, "user_config.data_dir": data_dir,
                     "user_config.gemini_api_key": "", "HOME": self.dir}
        argv = [substitute(config["command"], variables)]
        argv += [substitute(a, variables) for a in config.get("args", [])]
        env = {k: substitute(v, variables) for k, v in config.get("env", {}).items()}
        self.assertEqual(os.path.realpath(argv[0]),
                         os.path.realpath(os.path.join(self.dir,
                                                       self.manifest["server"]["entry_point"])))
        # The harness adds its own --data-dir first; this launcher drops it, so the command line
        # is the manifest's alone.
        launcher = os.path.join(self.dir, "launch-as-manifest")
        with open(launcher, "w") as f:
            f.write("#!/bin/sh\nshift 2\nexec " + shlex.join(argv) + "\n")
        os.chmod(launcher, 0o755)
        info, image = generate_over_stdio(self, launcher, args=(), env=env)
        self.assertEqual(info["serverInfo"]["version"], VERSION)
        self.assertEqual((image["version"], image["backend"]), (1, "local"))
        self.assertTrue(image["path"].startswith(data_dir), image["path"])
        self.assertEqual(sorted(self.tool_names),
                         sorted(t["name"] for t in self.manifest["tools"]))


if __name__ == "__main__":
    unittest.main()
