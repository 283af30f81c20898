"""dist/server.json, the MCP Registry entry: the constraints of the registry's server.json schema
(2025-09-29, https://static.modelcontextprotocol.io/schemas/2025-09-29/server.schema.json) that
this entry relies on, checked field by field, and its packages pointing at what scripts/package
built: the npm launcher of this version, whose mcpName is the entry's name (the registry's
ownership check), and the .mcpb with the SHA-256 of the file in dist/."""
import hashlib
import json
import os
import tarfile
import unittest

from package_support import VERSION, artifact

SCHEMA = "https://static.modelcontextprotocol.io/schemas/2025-09-29/server.schema.json"


class ServerJson(unittest.TestCase):
    def setUp(self):
        with open(artifact("server.json")) as f:
            self.entry = json.load(f)

    def test_top_level_fields(self):
        self.assertEqual(self.entry["$schema"], SCHEMA)
        self.assertRegex(self.entry["name"], r"^[a-zA-Z0-9.-]+/[a-zA-Z0-9._-]+$")
        self.assertTrue(1 <= len(self.entry["description"]) <= 100)
        self.assertEqual(self.entry["version"], VERSION)
        self.assertEqual(self.entry["repository"]["source"], "github")
        for package in self.entry["packages"]:
            self.assertIn(package["registryType"], ("npm", "pypi", "nuget", "oci", "mcpb"))
            self.assertEqual(package["transport"], {"type": "stdio"})
            self.assertEqual(package["version"], VERSION)

    def test_npm_package_is_the_launcher_and_names_this_entry(self):
        npm = next(p for p in self.entry["packages"] if p["registryType"] == "npm")
        self.assertEqual(npm["identifier"], "imgmcp")
        with tarfile.open(artifact(f"imgmcp-{VERSION}.tgz")) as tar:
            manifest = json.load(tar.extractfile("package/package.json"))
        self.assertEqual((manifest["name"], manifest["version"]), ("imgmcp", VERSION))
        self.assertEqual(manifest["mcpName"], self.entry["name"])
        secret = {v["name"]: v for v in npm["environmentVariables"]}["GEMINI_API_KEY"]
        self.assertTrue(secret["isSecret"])

    def test_mcpb_package_is_the_bundle_in_dist_by_its_hash(self):
        mcpb = next(p for p in self.entry["packages"] if p["registryType"] == "mcpb")
        name = f"imgmcp-{VERSION}-linux-x64.mcpb"
        self.assertTrue(mcpb["identifier"].startswith("https://github.com/"), mcpb["identifier"])
        self.assertTrue(mcpb["identifier"].endswith(f"/v{VERSION}/{name}"), mcpb["identifier"])
        self.assertRegex(mcpb["fileSha256"], r"^[a-f0-9]{64}$")
        with open(artifact(name), "rb") as f:
            self.assertEqual(mcpb["fileSha256"], hashlib.sha256(f.read()).hexdigest())


if __name__ == "__main__":
    unittest.main()
