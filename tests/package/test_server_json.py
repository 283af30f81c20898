"""dist/server.json, the MCP Registry entry: valid against the registry's published schema
(registry/server.schema.json, a copy of the 2025-09-29 schema with its source commit in
registry/README.md, checked by Ajv from tests/package/node_modules), and its packages pointing at
what scripts/package built: the npm launcher of this version, whose mcpName is the entry's name
(the registry's ownership check), and the .mcpb with the SHA-256 of the file in dist/."""
import copy
import hashlib
import json
import os
import subprocess
import tarfile
import tempfile
import unittest

from package_support import VERSION, artifact
from skips import require, require_tool  # tests/support, on sys.path through package_support

SCHEMA = "https://static.modelcontextprotocol.io/schemas/2025-09-29/server.schema.json"
HERE = os.path.dirname(os.path.abspath(__file__))
VALIDATOR = os.path.join(HERE, "validate_server_json.mjs")


def validate(entry):
    """Runs the registry schema's validator on entry; returns (exit code, its output)."""
    with tempfile.TemporaryDirectory(prefix="imgmcp-server-json-") as tmp:
        path = os.path.join(tmp, "server.json")
        with open(path, "w") as f:
            json.dump(entry, f)
        proc = subprocess.run(["node", VALIDATOR, path], capture_output=True, text=True,
                              timeout=60)
    return proc.returncode, proc.stdout + proc.stderr


class ServerJson(unittest.TestCase):
    def setUp(self):
        with open(artifact("server.json")) as f:
            self.entry = json.load(f)

    def require_validator(self):
        require_tool("node", "nodejs")
        require(os.path.isdir(os.path.join(HERE, "node_modules", "ajv")),
                "tests/package/node_modules is not installed (npm ci in tests/package)")

    def test_valid_against_the_registry_schema(self):
        self.require_validator()
        code, out = validate(self.entry)
        self.assertEqual(code, 0, out)
        self.assertIn(SCHEMA, out)

    def test_the_validator_refuses_what_the_schema_forbids(self):
        self.require_validator()
        # The same entry with one defect each: the check above can fail.
        defects = {
            "/packages/1/fileSha256": lambda e: e["packages"][1].update(fileSha256="ABC"),
            "/packages/0/version": lambda e: e["packages"][0].update(version="latest"),
            "/packages/0": lambda e: e["packages"][0].pop("transport"),
            "/name": lambda e: e.update(name="no-slash"),
        }
        for pointer, damage in defects.items():
            entry = copy.deepcopy(self.entry)
            damage(entry)
            code, out = validate(entry)
            self.assertEqual(code, 1, f"{pointer}: {out}")
            self.assertIn(pointer, out)

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

    def test_each_mcpb_package_is_a_bundle_in_dist_by_its_hash(self):
        bundles = [p for p in self.entry["packages"] if p["registryType"] == "mcpb"]
        self.assertEqual(len(bundles), 2)
        for mcpb, arch in zip(bundles, ("x64", "arm64")):
            name = f"imgmcp-{VERSION}-linux-{arch}.mcpb"
            self.assertTrue(mcpb["identifier"].startswith("https://github.com/"),
                            mcpb["identifier"])
            self.assertTrue(mcpb["identifier"].endswith(f"/v{VERSION}/{name}"),
                            mcpb["identifier"])
            self.assertRegex(mcpb["fileSha256"], r"^[a-f0-9]{64}$")
            with open(artifact(name), "rb") as f:
                self.assertEqual(mcpb["fileSha256"], hashlib.sha256(f.read()).hexdigest())

if __name__ == "__main__":
    unittest.main()
