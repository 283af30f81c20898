"""Where `{path}` images may be read from (docs/security.md, "File reads"): the working directory,
the data dir and each --allow-read directory — but never the file system's root. A server
started in / (as some clients start their servers) reads nothing through its working directory,
the same rule as save_to's writes; the data dir and --allow-read directories still work."""
import os
import shutil
import tempfile
import unittest

from docs_support import assert_listed, names_of_tests
from mcp_harness import ServerProcess
from tools_support import pngio


class ReadRootsInSlash(unittest.TestCase):
    def setUp(self):
        # A readable image the server was never told about: below /, and nothing else.
        self.elsewhere = tempfile.mkdtemp(prefix="imgmcp-elsewhere-")
        self.addCleanup(shutil.rmtree, self.elsewhere, True)
        self.image = os.path.join(self.elsewhere, "private.png")
        with open(self.image, "wb") as f:
            f.write(pngio.solid_png(8, 8, (30, 60, 90)))

    def start(self, *args):
        server = ServerProcess(["--backend", "local", *args], cwd="/")
        self.addCleanup(server.__exit__, None, None, None)
        server.initialize()
        return server

    def import_image(self, server, path, session_id="roots"):
        return server.call_tool("edit_image", {"session_id": session_id, "prompt": "invert",
                                               "inline": "none", "image": {"path": path}},
                                timeout=60)["result"]

    def assert_refused(self, result, path):
        self.assertTrue(result.get("isError"), result)
        text = result["content"][0]["text"]
        self.assertIn("'image.path'", text)
        self.assertIn("outside the allowed directories", text)
        self.assertIn("/ is never one", text)
        self.assertIn(path, text)

    def test_an_absolute_path_is_not_read_through_a_working_directory_of_slash(self):
        server = self.start()
        self.assert_refused(self.import_image(server, self.image), self.image)
        stored = [name for _, _, names in os.walk(os.path.join(server.data_dir, "images"))
                  for name in names]
        self.assertEqual(stored, [])  # nothing was imported

    def test_a_relative_path_is_not_read_either(self):
        server = self.start()
        relative = os.path.relpath(self.image, "/")
        self.assert_refused(self.import_image(server, relative), relative)

    def test_the_data_dir_and_allow_read_directories_still_are(self):
        server = self.start("--allow-read", self.elsewhere)
        allowed = self.import_image(server, self.image)
        self.assertFalse(allowed.get("isError"), allowed)
        self.assertEqual(allowed["structuredContent"]["version"], 2)  # import, then the edit
        kept = os.path.join(server.data_dir, "kept.png")
        shutil.copy(self.image, kept)
        from_data_dir = self.import_image(server, kept, session_id="from-data")
        self.assertFalse(from_data_dir.get("isError"), from_data_dir)


class CatalogueDocs(unittest.TestCase):
    def test_the_docs_list_every_test_here(self):
        assert_listed(self, names_of_tests(ReadRootsInSlash))


if __name__ == "__main__":
    unittest.main()
