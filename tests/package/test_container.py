"""The container image as shipped in imgmcp-<version>-oci.tar: one OCI index holding an image per
architecture, loaded and run with podman (Debian's podman 4.3, in a storage of the test's own,
with packaging/container/containers.conf: runc and rlimits within this machine's):

- the index names linux/amd64 and linux/arm64 images, each within 25 MB unpacked, running as an
  unprivileged user with /data a volume;
- `podman load` of the archive, then over stdio (`run -i`): initialize and a generation, and a
  second `run` on the same volume reads that session back;
- HTTP mode through a published port, and a stop (SIGTERM) that drains and exits 0;
- the arm64 image's own files (its loader and libc) under qemu-user: a generation over stdio and
  HTTP mode (this machine runs no arm64 container: it has no binfmt handler for qemu);
- a push of the index to a local registry (Debian's docker-registry on loopback) and a pull of
  each architecture by --arch;
- the Docker MCP catalog entry (packaging/container/server.yaml) names the key and the volume.
"""
import gzip
import http.client
import io
import json
import os
import shutil
import socket
import subprocess
import sys
import tarfile
import tempfile
import unittest

from package_support import VERSION, artifact, fresh_prefix, initialize_over_http

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from imgmcp_process import HttpProcess  # noqa: E402  (tests/support)
from skips import require_tool  # noqa: E402  (tests/support)

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
CONTAINERS_CONF = os.path.join(ROOT, "packaging", "container", "containers.conf")
IMAGE = f"imgmcp:{VERSION}"
LIMIT_BYTES = 25 * 1024 * 1024
TIMEOUT = 120


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def read_oci_archive(path):
    """{architecture: (manifest, config, unpacked layer bytes)} of the index in an OCI archive."""
    with tarfile.open(path) as tar:
        def blob(digest):
            return tar.extractfile("blobs/sha256/" + digest.split(":", 1)[1]).read()
        top = json.loads(tar.extractfile("index.json").read())
        (entry,) = top["manifests"]
        index = json.loads(blob(entry["digest"]))
        images = {}
        for m in index["manifests"]:
            manifest = json.loads(blob(m["digest"]))
            config = json.loads(blob(manifest["config"]["digest"]))
            size = sum(len(gzip.decompress(blob(layer["digest"])))
                       for layer in manifest["layers"])
            images[m["platform"]["architecture"]] = (manifest, config, size)
        return images


class StdioContainer:
    """`podman run -i --rm -v VOLUME:/data IMAGE`, spoken to in JSON-RPC lines."""

    def __init__(self, podman, env, volume):
        self.proc = subprocess.Popen(podman + ["run", "-i", "--rm", "-v", f"{volume}:/data",
                                               IMAGE], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
        self.next_id = 0

    def request(self, method, params):
        self.next_id += 1
        self.proc.stdin.write(json.dumps({"jsonrpc": "2.0", "id": self.next_id, "method": method,
                                          "params": params}).encode() + b"\n")
        self.proc.stdin.flush()
        while True:
            line = self.proc.stdout.readline()
            if not line:
                raise AssertionError("the container ended: " + self.proc.stderr.read().decode())
            message = json.loads(line)
            if message.get("id") == self.next_id:
                return message

    def initialize(self):
        answer = self.request("initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                             "clientInfo": {"name": "imgmcp-tests",
                                                            "version": "0"}})
        self.proc.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
        self.proc.stdin.flush()
        return answer["result"]

    def call_tool(self, name, arguments):
        result = self.request("tools/call", {"name": name, "arguments": arguments})["result"]
        assert not result.get("isError"), result
        return result["structuredContent"]

    def close(self):
        self.proc.stdin.close()  # EOF: the server drains and exits
        try:
            code = self.proc.wait(timeout=TIMEOUT)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
            self.proc.stdout.close()
            self.proc.stderr.close()
        return code


class ContainerImage(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        require_tool("podman")
        cls.archive = artifact(f"imgmcp-{VERSION}-oci.tar")
        cls.storage = tempfile.mkdtemp(prefix="imgmcp-podman-")
        cls.addClassCleanup(shutil.rmtree, cls.storage, True)
        cls.env = dict(os.environ, CONTAINERS_CONF=CONTAINERS_CONF)
        cls.podman = ["podman", "--root", os.path.join(cls.storage, "root"), "--runroot",
                      os.path.join(cls.storage, "run"), "--storage-driver", "vfs"]
        cls.run_podman("load", "-q", "-i", cls.archive)

    @classmethod
    def run_podman(cls, *args, check=True, timeout=TIMEOUT):
        run = subprocess.run(cls.podman + list(args), env=cls.env, capture_output=True,
                             text=True, timeout=timeout)
        if check and run.returncode != 0:
            raise AssertionError(f"podman {' '.join(args)}: {run.returncode}\n{run.stderr}")
        return run

    @staticmethod
    def read_until(proc, text):
        """Reads `proc`'s stderr until a line holds `text` (fails at its end)."""
        for line in proc.stderr:
            if text in line:
                return
        raise AssertionError(f"the process ended without saying {text!r}")

    def wait_for_line(self, command, text):
        """Runs `command` (a log follower) until its output holds `text`, then stops it."""
        follower = subprocess.Popen(command, env=self.env, stdout=subprocess.DEVNULL,
                                    stderr=subprocess.PIPE, text=True)
        try:
            self.read_until(follower, text)
        finally:
            follower.terminate()
            follower.wait(30)
            follower.stderr.close()

    def test_the_index_holds_both_architectures_small_and_unprivileged(self):
        images = read_oci_archive(self.archive)
        self.assertEqual(sorted(images), ["amd64", "arm64"])
        for arch, (_, config, size) in images.items():
            self.assertLessEqual(size, LIMIT_BYTES, arch)
            self.assertEqual(config["os"], "linux")
            self.assertEqual(config["config"]["User"], "65532:65532")
            self.assertIn("/data", config["config"]["Volumes"])
            self.assertEqual(config["config"]["Entrypoint"], ["/bin/imgmcp"])

    def test_a_session_over_stdio_outlives_its_container_on_the_volume(self):
        volume = f"imgmcp-test-{os.getpid()}"
        self.addCleanup(self.run_podman, "volume", "rm", "-f", volume, check=False)
        first = StdioContainer(self.podman, self.env, volume)
        try:
            self.assertEqual(first.initialize()["serverInfo"]["version"], VERSION)
            made = first.call_tool("generate_image", {"prompt": "solid red", "session_id": "box",
                                                      "inline": "none"})
            self.assertEqual((made["version"], made["backend"]), (1, "local"))
            self.assertTrue(made["path"].startswith("/data/"), made["path"])
        finally:
            self.assertEqual(first.close(), 0)
        second = StdioContainer(self.podman, self.env, volume)
        try:
            second.initialize()
            again = second.call_tool("get_image", {"session_id": "box", "inline": "none"})
            self.assertEqual((again["version"], again["sha256"]), (1, made["sha256"]))
        finally:
            self.assertEqual(second.close(), 0)

    def test_http_through_a_published_port_and_a_draining_stop(self):
        port = free_port()  # the same inside and out: the Host header names it
        name = f"imgmcp-http-{os.getpid()}"
        self.run_podman("run", "-d", "--name", name, "-p", f"127.0.0.1:{port}:{port}", IMAGE,
                        "--http", f"0.0.0.0:{port}")
        self.addCleanup(self.run_podman, "rm", "-f", name, check=False)
        self.wait_for_line(self.podman + ["logs", "-f", name], "listening on")
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        conn.request("POST", "/mcp", json.dumps({
            "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": "2025-11-25", "capabilities": {},
                "clientInfo": {"name": "imgmcp-tests", "version": "0"}}}),
            {"Content-Type": "application/json",
             "Accept": "application/json, text/event-stream"})
        answer = conn.getresponse()
        text = answer.read().decode()
        conn.close()
        self.assertEqual(answer.status, 200, text)
        self.assertIn(f'"version":"{VERSION}"', text.replace(" ", ""))
        self.run_podman("stop", "-t", "30", name)
        code = self.run_podman("inspect", name, "--format", "{{.State.ExitCode}}").stdout.strip()
        self.assertEqual(code, "0", self.run_podman("logs", name, check=False).stderr)
        self.assertIn("SIGTERM", self.run_podman("logs", name).stderr)

    def test_the_arm64_image_serves_stdio_and_http_with_its_own_libc_under_qemu(self):
        qemu = require_tool("qemu-aarch64-static", "qemu-user-static")
        rootfs = fresh_prefix(self)
        with tarfile.open(self.archive) as tar:
            images = read_oci_archive(self.archive)
            manifest = images["arm64"][0]
            for layer in manifest["layers"]:
                data = gzip.decompress(tar.extractfile(
                    "blobs/sha256/" + layer["digest"].split(":", 1)[1]).read())
                with tarfile.open(fileobj=io.BytesIO(data)) as layer_tar:
                    layer_tar.extractall(rootfs)
        messages = [
            {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": "2025-11-25", "capabilities": {},
                "clientInfo": {"name": "imgmcp-tests", "version": "0"}}},
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
                "name": "generate_image", "arguments": {"prompt": "solid blue",
                                                        "session_id": "arm", "inline": "none"}}}]
        data = fresh_prefix(self)
        # At the end of its input the server answers the call in flight, then exits.
        run = subprocess.run([qemu, "-L", rootfs, os.path.join(rootfs, "bin", "imgmcp"),
                              "--data-dir", data],
                             input="".join(json.dumps(m) + "\n" for m in messages),
                             capture_output=True, text=True, timeout=TIMEOUT)
        self.assertEqual(run.returncode, 0, run.stderr)
        answers = {a["id"]: a for a in map(json.loads, run.stdout.splitlines()) if "id" in a}
        self.assertEqual(answers[1]["result"]["serverInfo"]["version"], VERSION)
        self.assertEqual(answers[2]["result"]["structuredContent"]["version"], 1, answers[2])
        # And HTTP, with the network module from the image's /lib/imgmcp.
        script = os.path.join(fresh_prefix(self), "imgmcp")
        with open(script, "w") as f:
            f.write(f'#!/bin/sh\nexec "{qemu}" -L "{rootfs}" "{rootfs}/bin/imgmcp" "$@"\n')
        os.chmod(script, 0o755)
        with HttpProcess("--backend", "local", binary=script, start_timeout=TIMEOUT) as server:
            status, text = initialize_over_http(server)
            self.assertEqual(status, 200, text)

    def test_the_docker_catalog_entry_runs_this_image_with_its_volume_and_key(self):
        with open(os.path.join(ROOT, "packaging", "container", "server.yaml")) as f:
            entry = f.read()
        for line in ("name: imgmcp", "type: server", "env: GEMINI_API_KEY", "- imgmcp-data:/data",
                     "project: https://github.com/imgmcp/imgmcp"):
            self.assertIn(line, entry)

    def test_a_registry_serves_each_architecture_by_arch(self):
        registry = require_tool("docker-registry")
        port = free_port()
        directory = fresh_prefix(self)
        config = os.path.join(directory, "config.yml")
        with open(config, "w") as f:
            f.write(f"version: 0.1\nstorage:\n  filesystem:\n    rootdirectory: {directory}/data\n"
                    f"http:\n  addr: 127.0.0.1:{port}\n")
        server = subprocess.Popen([registry, "serve", config], stdout=subprocess.DEVNULL,
                                  stderr=subprocess.PIPE, text=True)
        self.addCleanup(lambda: (server.terminate(), server.wait(30), server.stderr.close()))
        self.read_until(server, "listening on")
        reference = f"127.0.0.1:{port}/imgmcp:{VERSION}"
        self.run_podman("manifest", "create", "imgmcp-list")
        self.addCleanup(self.run_podman, "manifest", "rm", "imgmcp-list", check=False)
        self.run_podman("manifest", "add", "--all", "imgmcp-list",
                        f"oci-archive:{self.archive}:{IMAGE}")
        self.run_podman("manifest", "push", "--all", "--tls-verify=false", "imgmcp-list",
                        f"docker://{reference}")
        for arch in ("amd64", "arm64"):
            self.run_podman("pull", "-q", "--arch", arch, "--tls-verify=false", reference)
            pulled = self.run_podman("image", "inspect", reference, "--format",
                                     "{{.Architecture}}").stdout.strip()
            self.assertEqual(pulled, arch)
            self.run_podman("rmi", "-f", reference)


if __name__ == "__main__":
    unittest.main()
