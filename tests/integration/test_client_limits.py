"""Client size limits: the default result of every tool stays small for a 4K image.

Claude Code drops structuredContent over 1,048,576 chars, caps a tool result at 25,000 tokens
(an image counts ~1,600) and ADK passes the whole result to Gemini as text; so with the default
`inline` ("preview") a result must stay well under 1 MiB even when the stored image is a noisy
3840x2160 PNG of several MB, and its preview must be a valid image with a long edge of 768 px
(--preview-max-edge) and at most ~600 KB.
"""
import base64
import json
import os
import random
import struct
import unittest

from tools_support import jpeg_size, ok_result, pngio, start_server, structured

MIB = 1024 * 1024
PREVIEW_EDGE = 768
PREVIEW_MAX_BYTES = 600 * 1024
SLOW = 120.0  # seconds for calls that decode/encode the 4K image


def noisy_4k_png(width=3840, height=2160, seed=4096):
    """Opaque RGB noise in 2x2 blocks: compresses badly, so the PNG is several MB."""
    rng = random.Random(seed)
    half_w = width // 2
    rows = bytearray()
    for _ in range(height // 2):
        rgb = rng.randbytes(half_w * 3)
        row = bytearray(width * 4)
        for dx in (0, 4):  # each noise pixel twice across
            for c in range(3):
                row[dx + c::8] = rgb[c::3]
        row[3::4] = b"\xff" * width
        rows += row
        rows += row  # and twice down
    return pngio.encode_png(width, height, bytes(rows))


class DefaultResultsStaySmall(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.big_png = noisy_4k_png()

    def setUp(self):
        self.server = start_server(self)
        self.big_path = os.path.join(self.server.data_dir, "big-4k.png")
        with open(self.big_path, "wb") as f:
            f.write(self.big_png)

    def assert_small_result(self, resp, expect_size, preview=True):
        """Checks one default tools/call response; returns its structuredContent. `preview`: the
        result must carry a preview (reset_session takes no `inline` and may carry none)."""
        result = ok_result(resp)
        wire = len(json.dumps(resp, separators=(",", ":")))
        self.assertLess(wire, MIB, "result over 1 MiB of JSON")
        sc = result["structuredContent"]
        self.assertLess(len(json.dumps(sc)), 16 * 1024, "structuredContent is not small")
        self.assertNotIn("base64", json.dumps(sc))
        text = sum(len(c["text"]) for c in result["content"] if c["type"] == "text")
        self.assertLess(text, 16 * 1024, "text blocks are not small")  # far below 25k tokens
        self.assertEqual((sc["width"], sc["height"]), expect_size)

        images = [c for c in result["content"] if c["type"] == "image"]
        if not preview and not images:
            return sc
        self.assertEqual(len(images), 1, "the default result carries one preview")
        data = base64.b64decode(images[0]["data"], validate=True)
        self.assertLessEqual(len(data), PREVIEW_MAX_BYTES)
        if data[:8] == b"\x89PNG\r\n\x1a\n":
            self.assertEqual(images[0]["mimeType"], "image/png")
            w, h, _, pixels = pngio.decode_png(data)  # full decode: CRCs, zlib, filters
            self.assertGreater(len(pixels), 0)
        else:
            self.assertEqual(images[0]["mimeType"], "image/jpeg")
            w, h = jpeg_size(data)
        self.assertEqual(max(w, h), min(PREVIEW_EDGE, max(expect_size)))
        # Same aspect ratio as the stored image, within rounding.
        self.assertAlmostEqual(w / h, expect_size[0] / expect_size[1], delta=0.01)
        return sc

    def test_the_input_is_a_4k_image_of_several_megabytes(self):
        self.assertEqual(struct.unpack(">II", self.big_png[16:24]), (3840, 2160))  # IHDR
        self.assertGreater(len(self.big_png), 4 * MIB)

    def test_every_tool_default_result_for_a_4k_session(self):
        sc = self.assert_small_result(self.server.call_tool(
            "edit_image", {"session_id": "k4", "prompt": "flip horizontal",
                           "image": {"path": self.big_path}}, timeout=SLOW), (3840, 2160))
        self.assertEqual(sc["version"], 2)
        self.assertGreater(sc["bytes"], 4 * MIB, "the stored edit is the big image itself")

        sc = self.assert_small_result(self.server.call_tool(
            "get_image", {"session_id": "k4"}, timeout=SLOW), (3840, 2160))
        self.assertEqual([h["operation"] for h in sc["history"]], ["import", "edit"])
        sc = self.assert_small_result(self.server.call_tool(
            "get_image", {"session_id": "k4", "version": 1}, timeout=SLOW), (3840, 2160))
        self.assertEqual(sc["bytes"], len(self.big_png))

        sc = self.assert_small_result(self.server.call_tool(
            "reset_session", {"session_id": "k4", "to_version": 1}, timeout=SLOW), (3840, 2160),
            preview=False)
        self.assertEqual(sc["version"], 3)

        sc = self.assert_small_result(self.server.call_tool(
            "edit_image", {"session_id": "k4", "prompt": "rotate 90"}, timeout=SLOW), (2160, 3840))
        self.assertEqual(sc["version"], 4)

    def test_generate_image_default_result_for_wide_and_tall_aspects(self):
        for aspect, size in (("21:9", None), ("9:16", None), ("16:9", (1344, 768))):
            resp = self.server.call_tool("generate_image", {
                "prompt": "a noisy storm of colourful confetti over a city at night",
                "aspect_ratio": aspect, "session_id": "gen-" + aspect.replace(":", "x")},
                timeout=SLOW)
            got = structured(resp)
            if size is not None:
                self.assertEqual((got["width"], got["height"]), size)
            self.assert_small_result(resp, (got["width"], got["height"]))

    def test_inline_none_result_for_a_4k_image_is_tiny(self):
        resp = self.server.call_tool("edit_image", {
            "session_id": "k4full", "prompt": "invert", "inline": "none",
            "image": {"path": self.big_path}}, timeout=SLOW)
        self.assertLess(len(json.dumps(resp)), 16 * 1024)
        self.assertEqual([c["type"] for c in ok_result(resp)["content"]], ["text", "resource_link"])


if __name__ == "__main__":
    unittest.main()
