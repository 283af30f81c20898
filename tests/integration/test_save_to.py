"""save_to over the real binary: a copy of a version written where the caller asks, only below
the working directory and --allow-write roots, never into the data dir, never through a symlink,
never replacing a file unless overwrite is true, converted on request, atomic; and what the
result says when the copy cannot be written after the version was committed.

Every test runs in a sandbox — data/ (the data dir), work/ (the server's working directory),
extra/ (an --allow-write root where a test gives one), outside/ (no root) — and checks when it
ends that nothing appeared outside work/ and extra/ (besides the data dir).
"""
import base64
import json
import os
import shutil
import stat
import struct
import subprocess
import tempfile
import threading
import unittest

from docs_support import assert_listed, names_of_tests
from mcp_harness import ServerProcess
from skips import require  # tests/support, on sys.path through mcp_harness
from test_http import HttpServer
from tools_support import (error_text, jpeg_size, noisy_png, ok_result, pngio, read_bytes,
                           sha256_file, small_png_b64, structured, tool_result)

CALL_TIMEOUT = 30.0
GATE_TIMEOUT = 20.0
RACE_ROUNDS = 20  # rounds of 40 saves against the swapping thread until the race is hit


# --- image checks ---------------------------------------------------------------------------------

def webp_size(data):
    """(width, height) from a WebP's first chunk (VP8, VP8L or VP8X)."""
    assert data[:4] == b"RIFF" and data[8:12] == b"WEBP", data[:16]
    kind = data[12:16]
    if kind == b"VP8 ":
        width, height = struct.unpack("<HH", data[26:30])
        return width & 0x3FFF, height & 0x3FFF
    if kind == b"VP8L":
        bits = struct.unpack("<I", data[21:25])[0]
        return (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
    if kind == b"VP8X":
        return (int.from_bytes(data[24:27], "little") + 1,
                int.from_bytes(data[27:30], "little") + 1)
    raise AssertionError(f"unknown WebP chunk {kind!r}")


def png_size(data):
    width, height, _, _ = pngio.decode_png(data)  # decodes every row: the file is whole
    return width, height


# --- the sandbox ----------------------------------------------------------------------------------

class Sandbox(unittest.TestCase):
    """A sandbox and a server in it; tearDown checks that no write landed outside the roots."""

    def setUp(self):
        self.sandbox = tempfile.mkdtemp(prefix="imgmcp-save-to-")
        self.addCleanup(shutil.rmtree, self.sandbox, True)
        for d in ("data", "work", "extra", "outside"):
            os.makedirs(self.path(d))
        self.server = None

    def path(self, *parts):
        return os.path.realpath(os.path.join(self.sandbox, *parts))

    def start(self, *args, env=None, cwd=None):
        server = ServerProcess(args=["--backend", "local", *args], data_dir=self.path("data"),
                               cwd=cwd or self.path("work"), env=env)
        self.addCleanup(server.__exit__, None, None, None)
        server.initialize()
        self.server = server
        return server

    def call(self, tool, arguments, server=None):
        return (server or self.server).call_tool(tool, arguments, timeout=CALL_TIMEOUT)

    def tearDown(self):
        self.assertEqual(sorted(os.listdir(self.sandbox)), ["data", "extra", "outside", "work"])
        self.assertEqual(self.files_below("outside"), [])
        data = self.files_below("data")
        self.assertEqual([f for f in data if not f.startswith(("images/", "locks/", "imgmcp.db"))],
                         [], "only imgmcp's own files in the data dir")

    def files_below(self, *parts):
        root = self.path(*parts)
        found = []
        for dirpath, dirnames, filenames in os.walk(root):
            for name in filenames + [d for d in dirnames
                                     if os.path.islink(os.path.join(dirpath, d))]:
                found.append(os.path.relpath(os.path.join(dirpath, name), root))
        return sorted(found)

    def session_with_image(self, session_id="s", size=32):
        """Version 1 (an import) and 2 (inverted), size x size PNG."""
        return structured(self.call("edit_image", {
            "session_id": session_id, "prompt": "invert", "inline": "none",
            "image": {"data": small_png_b64(size), "mime_type": "image/png"}}))

    def call_all(self, tool, arguments_list):
        """Sends every call at once, then reads the answers (in the order sent)."""
        ids = []
        for arguments in arguments_list:
            rid = self.server.next_id()
            ids.append(rid)
            self.server.send({"jsonrpc": "2.0", "id": rid, "method": "tools/call",
                              "params": {"name": tool, "arguments": arguments}})
        return [tool_result(self.server.wait_for(
            lambda m, rid=rid: m.get("id") == rid and "method" not in m, CALL_TIMEOUT))
            for rid in ids]

    def version_of(self, session_id):
        resp = self.call("get_image", {"session_id": session_id, "inline": "none",
                                       "include_history": False})
        result = tool_result(resp)
        return None if result.get("isError") else result["structuredContent"]["version"]


# --- where copies go ------------------------------------------------------------------------------

class SaveToPaths(Sandbox):
    def test_a_relative_path_lands_in_the_working_directory(self):
        self.start()
        resp = self.call("generate_image", {"prompt": "solid teal", "session_id": "hero",
                                            "inline": "none", "save_to": "assets/hero.png"})
        sc = structured(resp)
        target = self.path("work", "assets", "hero.png")
        self.assertEqual(sc["saved_to"], target)
        self.assertEqual(sc["saved_format"], "png")
        self.assertEqual(sc["saved_bytes"], os.path.getsize(target))
        self.assertEqual(sha256_file(target), sc["sha256"])  # the version's own bytes
        self.assertEqual(png_size(read_bytes(target)), (1024, 1024))
        text = ok_result(resp)["content"][0]["text"].split("\n{")[0]
        self.assertEqual([line for line in text.split("\n") if "Saved a copy" in line],
                         [f"Saved a copy to {target} (png, {sc['saved_bytes'] / 1024:.1f} KB)."])
        self.assertNotIn("save_error", sc)

    def test_an_absolute_path_below_an_allow_write_root(self):
        self.start("--allow-write", self.path("extra"))
        target = self.path("extra", "deep", "er", "x.png")
        sc = structured(self.call("generate_image", {"prompt": "solid red", "inline": "none",
                                                     "save_to": target}))
        self.assertEqual(sc["saved_to"], target)
        self.assertEqual(png_size(read_bytes(target)), (1024, 1024))

    def test_a_directory_target_gets_the_default_name(self):
        self.start()
        self.session_with_image("dirs")
        sc = structured(self.call("edit_image", {"session_id": "dirs", "prompt": "grayscale",
                                                 "inline": "none", "save_to": "out/"}))
        self.assertEqual(sc["saved_to"], self.path("work", "out", "dirs-v3.png"))
        self.assertEqual(sha256_file(sc["saved_to"]), sc["sha256"])

    def test_get_image_saves_an_earlier_version(self):
        self.start()
        first = self.session_with_image("old")
        sc = structured(self.call("get_image", {"session_id": "old", "version": 1,
                                                "inline": "none", "save_to": "./v1/first.png"}))
        self.assertEqual(sc["version"], 1)
        self.assertEqual(sc["saved_to"], self.path("work", "v1", "first.png"))
        self.assertNotEqual(sha256_file(sc["saved_to"]), first["sha256"])  # v1, not v2
        self.assertEqual(sha256_file(sc["saved_to"]), sc["sha256"])

    def test_overwrite_true_replaces_an_existing_file(self):
        self.start()
        with open(self.path("work", "hero.png"), "wb") as f:
            f.write(b"an older hero")
        resp = self.call("generate_image", {"prompt": "solid red", "inline": "none",
                                            "save_to": "hero.png", "overwrite": True})
        sc = structured(resp)
        self.assertEqual(sha256_file(self.path("work", "hero.png")), sc["sha256"])
        self.assertIn("replacing the file that was there", ok_result(resp)["content"][0]["text"])

    def test_calls_without_save_to_are_unchanged(self):
        self.start()
        for tool, args in (("generate_image", {"prompt": "solid red", "session_id": "plain"}),
                           ("edit_image", {"session_id": "plain", "prompt": "invert"}),
                           ("get_image", {"session_id": "plain"})):
            result = ok_result(self.call(tool, dict(args, inline="none")))
            for key in ("saved_to", "saved_bytes", "saved_format", "save_error"):
                self.assertNotIn(key, result["structuredContent"], tool)
            self.assertNotIn("Saved a copy", result["content"][0]["text"])
            self.assertNotIn("NOT saved", result["content"][0]["text"])
        self.assertEqual(self.files_below("work"), [])


# --- refusals: an isError naming the field, nothing generated or committed, nothing written -------

class SaveToRefusals(Sandbox):
    def setUp(self):
        super().setUp()
        os.symlink(self.path("outside"), self.path("work", "linkdir"))
        os.symlink(self.path("outside", "x.png"), self.path("work", "link.png"))
        os.symlink(self.path("data"), self.path("work", "datalink"))
        os.mkfifo(self.path("work", "fifo.png"))
        with open(self.path("work", "taken.png"), "wb") as f:
            f.write(b"keep me")
        self.start()
        self.session_with_image("s")

    def refused(self, save, *names):
        """Refused on every tool before anything is done; nothing is committed or written."""
        before = self.files_below("work")
        for tool, args in (("generate_image", {"prompt": "solid red", "session_id": "fresh"}),
                           ("edit_image", {"session_id": "s", "prompt": "invert"}),
                           ("get_image", {"session_id": "s"})):
            with self.subTest(tool=tool, save=save):
                text = error_text(self.call(tool, dict(args, inline="none", **save)))
                for name in names:
                    self.assertIn(name, text)
        self.assertIsNone(self.version_of("fresh"), "nothing was generated")
        self.assertEqual(self.version_of("s"), 2, "nothing was committed")
        self.assertEqual(self.files_below("work"), before)
        self.assertEqual(read_bytes(self.path("work", "taken.png")), b"keep me")

    def test_traversal(self):
        self.refused({"save_to": "../outside/x.png"}, "'save_to'", "'..'")
        self.refused({"save_to": "assets/../../outside/x.png"}, "'save_to'", "'..'")

    def test_a_path_outside_every_root(self):
        self.refused({"save_to": self.path("outside", "x.png")}, "'save_to'",
                     "outside the directories imgmcp may write to", self.path("work"))
        self.refused({"save_to": "/etc/imgmcp-never.png"}, "'save_to'", "--allow-write")

    def test_symlinks_out_of_the_root(self):
        self.refused({"save_to": "linkdir/x.png"}, "'save_to'", "symbolic link")
        self.refused({"save_to": "linkdir/"}, "'save_to'", "symbolic link")
        self.refused({"save_to": "link.png", "overwrite": True}, "'save_to'", "symbolic link")

    def test_the_data_dir(self):
        self.refused({"save_to": self.path("data", "x.png")}, "'save_to'", "data directory")
        self.refused({"save_to": self.path("data", "images", "s") + "/"}, "'save_to'",
                     "data directory")
        self.refused({"save_to": "datalink/x.png"}, "'save_to'", "symbolic link")

    def test_an_existing_file(self):
        self.refused({"save_to": "taken.png"}, "'save_to'", "already exists",
                     "overwrite: true")

    def test_a_fifo_or_a_device_as_the_target(self):
        self.refused({"save_to": "fifo.png", "overwrite": True}, "'save_to'", "a FIFO",
                     "regular files")
        try:
            os.mknod(self.path("work", "null.png"), 0o600 | stat.S_IFCHR, os.makedev(1, 3))
        except PermissionError:
            require(False, "creating a device node needs root")
        self.refused({"save_to": "null.png", "overwrite": True}, "'save_to'",
                     "a character device")

    def test_a_directory_named_without_a_slash(self):
        os.mkdir(self.path("work", "assets"))
        self.refused({"save_to": "assets"}, "'save_to'", "is a directory", "end save_to with '/'")

    def test_bad_format_and_quality_arguments(self):
        self.refused({"save_to": "x.png", "save_format": "jpeg"}, "'save_to' ends in .png",
                     "'save_format' is \"jpeg\"")
        self.refused({"save_to": "x.png", "save_format": "bmp"}, "save_format", "\"webp\"")
        self.refused({"save_to": "x.jpg", "save_quality": 0}, "save_quality", "1 to 100")
        self.refused({"save_to": "x.jpg", "save_quality": 101}, "save_quality", "1 to 100")
        self.refused({"save_to": "x.png", "save_quality": 50}, "save_quality", "jpeg and webp")
        self.refused({"save_to": "x.bmp"}, "'save_to' ends in .bmp")
        self.refused({"save_format": "png"}, "'save_format' goes with 'save_to'")
        self.refused({"save_to": 7}, "save_to", "string")
        self.refused({"save_to": ""}, "'save_to' is empty")


# --- conversion -----------------------------------------------------------------------------------

class SaveToFormats(Sandbox):
    def setUp(self):
        super().setUp()
        self.start()
        self.version = self.session_with_image("f", size=48)

    def test_a_jpeg_by_extension_keeps_the_version_a_png(self):
        sc = structured(self.call("get_image", {"session_id": "f", "inline": "none",
                                                "save_to": "out/f.jpg"}))
        self.assertEqual((sc["saved_format"], sc["mime_type"]), ("jpeg", "image/png"))
        self.assertEqual(jpeg_size(read_bytes(sc["saved_to"])), (48, 48))
        self.assertEqual(sha256_file(sc["path"]), self.version["sha256"])  # the version untouched

    def test_webp_with_a_quality(self):
        sizes = {}
        for quality in (5, 95):
            sc = structured(self.call("get_image", {
                "session_id": "f", "inline": "none", "save_to": f"q{quality}",
                "save_format": "webp", "save_quality": quality}))
            data = read_bytes(sc["saved_to"])
            self.assertEqual(webp_size(data), (48, 48))
            sizes[quality] = len(data)
            self.assertEqual(sc["saved_bytes"], len(data))
        self.assertLess(sizes[5], sizes[95])

    def test_a_jpeg_version_saved_as_png(self):
        jpg = structured(self.call("get_image", {"session_id": "f", "inline": "none",
                                                 "save_to": "in.jpg"}))["saved_to"]
        imported = structured(self.call("edit_image", {
            "session_id": "j", "prompt": "invert", "inline": "none", "image": {"path": "in.jpg"}}))
        self.assertEqual(imported["version"], 2)
        sc = structured(self.call("get_image", {"session_id": "j", "version": 1, "inline": "none",
                                                "save_to": "back.png"}))
        self.assertEqual(sc["mime_type"], "image/jpeg")
        # The import kept the JPEG's bytes.
        self.assertEqual(read_bytes(sc["path"]), read_bytes(jpg))
        self.assertEqual(png_size(read_bytes(self.path("work", "back.png"))), (48, 48))

    def test_a_gif_name_is_refused_for_a_new_version_and_kept_for_a_stored_gif(self):
        # generate_image and edit_image make a PNG or JPEG: refused before anything is done.
        for tool, args in (("generate_image", {"prompt": "solid red", "session_id": "fresh"}),
                           ("edit_image", {"session_id": "f", "prompt": "invert"})):
            with self.subTest(tool=tool):
                text = error_text(self.call(tool, dict(args, inline="none", save_to="new.gif")))
                self.assertIn("'save_to' ends in .gif", text)
                self.assertIn("never a GIF", text)
        self.assertIsNone(self.version_of("fresh"), "nothing was generated")
        self.assertEqual(self.version_of("f"), 2, "nothing was committed")
        # get_image: an imported GIF is saved as .gif with its own bytes; a PNG version is not.
        gif = base64.b64decode("R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7")
        structured(self.call("edit_image", {
            "session_id": "g", "prompt": "invert", "inline": "none",
            "image": {"data": base64.b64encode(gif).decode(), "mime_type": "image/gif"}}))
        sc = structured(self.call("get_image", {"session_id": "g", "version": 1, "inline": "none",
                                                "save_to": "anim.gif"}))
        self.assertEqual((sc["mime_type"], sc["saved_format"]), ("image/gif", "gif"))
        self.assertEqual(read_bytes(self.path("work", "anim.gif")), gif)
        text = error_text(self.call("get_image", {"session_id": "f", "inline": "none",
                                                  "save_to": "png.gif"}))
        self.assertIn("imgmcp does not write GIF", text)
        self.assertEqual(self.files_below("work"), ["anim.gif"])

    def test_a_directory_target_takes_the_extension_of_the_format(self):
        sc = structured(self.call("edit_image", {"session_id": "f", "prompt": "invert",
                                                 "inline": "none", "save_to": "shots/",
                                                 "save_format": "jpeg", "save_quality": 60}))
        self.assertEqual(sc["saved_to"], self.path("work", "shots", "f-v3.jpg"))
        self.assertEqual(jpeg_size(read_bytes(sc["saved_to"])), (48, 48))


# --- races ------------------------------------------------------------------------------------------

def reach_gate(fifo):
    """Opens `fifo` for writing once the server waits at it (its open for reading). Returns the
    fd, whose close lets the server go on; fails when the server never gets there."""
    opened = {}
    opener = threading.Thread(target=lambda: opened.setdefault("fd", os.open(fifo, os.O_WRONLY)))
    opener.start()
    opener.join(GATE_TIMEOUT)
    if opener.is_alive():  # release the opener before failing
        os.close(os.open(fifo, os.O_RDONLY | os.O_NONBLOCK))
        opener.join()
        os.close(opened["fd"])
        raise AssertionError(f"the save never reached {fifo}")
    return opened["fd"]


class SaveToRaces(Sandbox):
    def gated_server(self, point):
        gates = tempfile.mkdtemp(prefix="imgmcp-save-gates-")
        self.addCleanup(shutil.rmtree, gates, True)
        os.mkfifo(os.path.join(gates, point))
        self.start(env={"IMGMCP_TEST_SAVE_GATES": gates})
        return os.path.join(gates, point)

    def swap_assets_for_a_symlink(self):
        os.rename(self.path("work", "assets"), self.path("work", "assets-moved"))
        os.symlink(self.path("outside"), self.path("work", "assets"))

    def send_edit(self, save_to):
        rid = self.server.next_id()
        self.server.send({"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": {
            "name": "edit_image", "arguments": {"session_id": "s", "prompt": "invert",
                                                "inline": "none", "save_to": save_to}}})
        return lambda: self.server.wait_for(lambda m: m.get("id") == rid and "method" not in m,
                                            CALL_TIMEOUT)

    def test_a_parent_swapped_for_a_symlink_after_the_walk_writes_inside(self):
        fifo = self.gated_server("before-write")
        os.mkdir(self.path("work", "assets"))
        self.session_with_image("s")
        answer = self.send_edit("assets/hero.png")
        fd = reach_gate(fifo)
        self.swap_assets_for_a_symlink()
        os.close(fd)
        sc = structured(answer())
        # Written into the directory the walk opened, which is still inside the root.
        self.assertEqual(sha256_file(self.path("work", "assets-moved", "hero.png")), sc["sha256"])

    def test_a_parent_swapped_for_a_symlink_before_the_walk_is_refused_after_the_commit(self):
        fifo = self.gated_server("before-walk")
        os.mkdir(self.path("work", "assets"))
        self.session_with_image("s")
        answer = self.send_edit("assets/hero.png")
        fd = reach_gate(fifo)
        self.swap_assets_for_a_symlink()
        os.close(fd)
        result = ok_result(answer())  # the version stands: not an isError
        sc = result["structuredContent"]
        self.assertEqual(sc["version"], 3)
        self.assertTrue(os.path.exists(sc["path"]))
        self.assertIn("symbolic link", sc["save_error"])
        self.assertNotIn("saved_to", sc)
        self.assertIn("The copy was NOT saved", result["content"][0]["text"])
        self.assertIn("Version 3 is committed", result["content"][0]["text"])
        self.assertEqual(self.version_of("s"), 3)
        self.assertEqual(self.files_below("work", "assets-moved"), [])

    def test_a_racing_thread_swapping_the_directory_never_leads_a_write_outside(self):
        """A thread moves swap/ aside and puts a symlink out of the root in its place, over and
        over, while 40 saves write into it: whatever each save meets, nothing lands outside the
        root. And the race was hit, or the test fails: some copy landed in a directory after
        the thread had moved it aside, so that save's walk opened the directory before the move
        and its write came after (the thread lists each directory right after moving it; the
        server never names a moved directory, so a copy not in that list came through an open
        made before the move). Rounds of 40 go on until that is seen, RACE_ROUNDS at most."""
        self.start()
        # Copies of about 770 KB of noise: each write keeps the window open long enough to be
        # hit on a tmpfs too, where small copies were hit in a round of 40 only now and then.
        structured(self.call("edit_image", {
            "session_id": "s", "prompt": "invert", "inline": "none",
            "image": {"data": base64.b64encode(noisy_png(512, 512)).decode(),
                      "mime_type": "image/png"}}))
        late = []
        for round_ in range(RACE_ROUNDS):
            late += self.race_round(round_)
            if late:
                break
        self.assertNotEqual(late, [], f"in {RACE_ROUNDS} rounds of 40 saves no directory moved "
                            "between a save's walk and its write: the race was never hit")

    def race_round(self, round_):
        """40 saves to swap/ against the swapping thread; the copies that landed late."""
        swap = self.path("work", "swap")
        stop = threading.Event()
        moved = []  # (a directory moved aside, its entries right after the move)

        def swapper():
            while not stop.is_set():
                aside = f"{swap}.{round_}.{len(moved)}"
                try:
                    os.rename(swap, aside)  # a directory moves aside, still inside the root
                    moved.append((aside, set(os.listdir(aside))))
                except OSError:
                    pass
                try:
                    os.symlink(self.path("outside"), swap)
                    os.unlink(swap)
                except OSError:
                    pass
        thread = threading.Thread(target=swapper)
        thread.start()
        try:
            results = self.call_all("get_image", [
                {"session_id": "s", "inline": "none", "save_to": f"swap/copy-{round_}-{i}.png"}
                for i in range(40)])
        finally:
            stop.set()
            thread.join()
        written = {os.path.basename(f) for f in self.files_below("work")}
        for i, result in enumerate(results):
            if result.get("isError"):
                self.assertRegex(result["content"][0]["text"],
                                 "(?i)symbolic link|not a directory|no such file")
            else:  # in swap/ or a directory moved aside: inside the root either way
                self.assertIn(f"copy-{round_}-{i}.png", written)
        self.assertEqual(self.files_below("outside"), [])
        return [os.path.join(aside, name) for aside, before in moved
                for name in set(os.listdir(aside)) - before if name.startswith("copy-")]

    def test_twenty_concurrent_saves_of_one_session_to_one_directory(self):
        self.start()
        self.session_with_image("s")
        results = [ok_result({"result": r})["structuredContent"] for r in self.call_all(
            "edit_image", [{"session_id": "s", "prompt": "invert", "inline": "none",
                            "save_to": "shots/"}] * 20)]
        self.assertEqual([sc["version"] for sc in results], list(range(3, 23)))
        self.assertEqual(self.files_below("work", "shots"),
                         sorted(f"s-v{v}.png" for v in range(3, 23)))
        for sc in results:
            self.assertEqual(sc["saved_to"], self.path("work", "shots", f"s-v{sc['version']}.png"))
            self.assertEqual(sha256_file(sc["saved_to"]), sc["sha256"])
            self.assertEqual(png_size(read_bytes(sc["saved_to"])), (32, 32))

    def test_twenty_concurrent_saves_to_one_name_write_it_once(self):
        self.start()
        self.session_with_image("s")
        results = self.call_all("get_image", [{"session_id": "s", "inline": "none",
                                                "save_to": "one/hero.png"}] * 20)
        written = [r for r in results if not r.get("isError")]
        self.assertEqual(len(written), 1)
        for r in results:
            if r.get("isError"):
                self.assertIn("already exists", r["content"][0]["text"])
        self.assertEqual(self.files_below("work", "one"), ["hero.png"])
        self.assertEqual(sha256_file(self.path("work", "one", "hero.png")),
                         written[0]["structuredContent"]["sha256"])


# --- failures after the commit --------------------------------------------------------------------

class SaveToFailures(Sandbox):
    def noisy_session(self):
        """Version 1: a 160x160 noise PNG (about 77 KB that does not compress); 2: inverted."""
        data = noisy_png(160, 160)
        return structured(self.call("edit_image", {
            "session_id": "n", "prompt": "invert", "inline": "none",
            "image": {"data": base64.b64encode(data).decode(),
                      "mime_type": "image/png"}}))

    def assert_committed_but_not_saved(self, result, version, why):
        sc = result["structuredContent"]
        self.assertFalse(result.get("isError"))
        self.assertEqual(sc["version"], version)
        self.assertEqual(sha256_file(sc["path"]), sc["sha256"])
        self.assertIn(why, sc["save_error"])
        self.assertNotIn("saved_to", sc)
        text = result["content"][0]["text"]
        self.assertIn("The copy was NOT saved", text)
        self.assertIn(f"Version {version} is committed", text)
        self.assertEqual(self.version_of("n"), version)

    def test_a_full_disk_keeps_the_committed_version(self):
        small = self.path("extra", "small")
        os.mkdir(small)
        mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", small],
                                 capture_output=True)
        require(mounted.returncode == 0,
                "cannot mount a tmpfs here (needs root): " + mounted.stderr.decode().strip())
        self.addCleanup(subprocess.run, ["umount", "-l", small], capture_output=True)
        self.start("--allow-write", small)
        self.noisy_session()
        result = ok_result(self.call("edit_image", {"session_id": "n", "prompt": "invert",
                                                    "inline": "none",
                                                    "save_to": small + "/copy.png"}))
        self.assert_committed_but_not_saved(result, 3, "No space left on device")
        self.assertEqual(os.listdir(small), [])  # the temp file went too

    def test_an_injected_write_failure_keeps_the_committed_version(self):
        self.start(env={"IMGMCP_TEST_SAVE_DISK_FULL": "1"})
        self.noisy_session()
        result = ok_result(self.call("edit_image", {"session_id": "n", "prompt": "invert",
                                                    "inline": "none", "save_to": "out/copy.png"}))
        self.assert_committed_but_not_saved(result, 3, "No space left on device")
        self.assertEqual(self.files_below("work"), [])
        self.assertIn("IMGMCP_TEST_SAVE_DISK_FULL", self.server.stderr)

    def test_get_image_reports_a_failed_write_as_its_error(self):
        self.start(env={"IMGMCP_TEST_SAVE_DISK_FULL": "1"})
        self.noisy_session()
        text = error_text(self.call("get_image", {"session_id": "n", "inline": "none",
                                                  "save_to": "copy.png"}))
        self.assertIn("the copy of version 2 was not saved", text)
        self.assertIn("No space left on device", text)
        self.assertEqual(self.files_below("work"), [])


# --- flags, HTTP ----------------------------------------------------------------------------------

class SaveToRoots(Sandbox):
    def test_allow_write_from_the_environment(self):
        for d in ("a", "b"):
            os.mkdir(self.path("extra", d))
        self.start(env={"IMGMCP_ALLOW_WRITE": self.path("extra", "a") + ":" +
                        self.path("extra", "b")})
        for d in ("a", "b"):
            sc = structured(self.call("generate_image", {
                "prompt": "solid red", "inline": "none",
                "save_to": self.path("extra", d, "x.webp")}))
            self.assertEqual(webp_size(read_bytes(sc["saved_to"])), (1024, 1024))
        text = error_text(self.call("generate_image", {
            "prompt": "solid red", "inline": "none", "save_to": self.path("extra", "x.png")}))
        self.assertIn(self.path("extra", "a"), text)  # the roots are named

    def test_a_working_directory_of_slash_is_not_a_root(self):
        server = self.start(cwd="/")
        self.assertIn("save_to can write nowhere", server.wait_for_stderr("save_to can write"))
        text = error_text(self.call("generate_image", {"prompt": "solid red", "inline": "none",
                                                       "save_to": self.path("work", "x.png")}))
        self.assertIn("outside the directories imgmcp may write to (none)", text)

    def test_the_schema_says_where_relative_paths_start(self):
        self.start("--allow-write", self.path("extra"))
        tools = {t["name"]: t for t in self.server.request("tools/list")["result"]["tools"]}
        for name in ("generate_image", "edit_image", "get_image"):
            props = tools[name]["inputSchema"]["properties"]
            self.assertIn(self.path("work"), props["save_to"]["description"])
            self.assertIn(self.path("extra"), props["save_to"]["description"])
            self.assertEqual(props["save_format"]["enum"], ["png", "jpeg", "webp"])
            self.assertEqual(props["save_quality"]["type"], "integer")
            self.assertEqual(props["overwrite"]["type"], "boolean")
            for banned in ("oneOf", "anyOf", "allOf", "$ref"):
                self.assertNotIn(banned, json.dumps(tools[name]["inputSchema"]))
        self.assertNotIn("save_to", tools["reset_session"]["inputSchema"]["properties"])

    def test_over_http_the_same_rules_apply_on_the_serving_replica(self):
        server = HttpServer("--backend", "local", "--allow-write", self.path("extra"))
        self.addCleanup(server.close)
        session = server.initialize()

        def generate(id_, save_to):
            messages = server.call(session, id_, "tools/call", {
                "name": "generate_image",
                "arguments": {"prompt": "solid red", "inline": "none", "save_to": save_to}})
            return [m for m in messages if m.get("id") == id_][0]["result"]
        result = generate(1, self.path("extra", "http", "x.png"))
        self.assertFalse(result.get("isError"), result)
        self.assertEqual(png_size(read_bytes(self.path("extra", "http", "x.png"))), (1024, 1024))
        # An HTTP server's working directory here is its data dir: relative paths are refused.
        result = generate(2, "x.png")
        self.assertTrue(result.get("isError"))
        self.assertIn("data directory", result["content"][0]["text"])


class CatalogueDocs(unittest.TestCase):
    """docs/bad-input.md lists every test here (so the page cannot fall behind the tests)."""

    def test_the_docs_list_every_test_here(self):
        assert_listed(self, names_of_tests(SaveToPaths, SaveToRefusals, SaveToFormats, SaveToRaces,
                                       SaveToFailures, SaveToRoots))


if __name__ == "__main__":
    unittest.main()
