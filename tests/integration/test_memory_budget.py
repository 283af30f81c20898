"""The memory budget for work in flight (--max-inflight-mb), against the real binary and the
Gemini fake: a call whose images and request would not fit the budget alone is refused before
anything is read or sent; a call that does not fit beside the calls in flight is refused as busy
(retry later) and the budget is whole again once they end. Nothing refused is committed.
"""
import base64
import os
import random
import unittest

from fake_gemini_support import FakeGeminiTestCase
from tools_support import error_text, pngio, structured


def noisy_png(width, height, seed):
    """Random RGBA pixels: the PNG is as large as the pixels (about width*height*4 bytes)."""
    return pngio.encode_png(width, height, random.Random(seed).randbytes(width * height * 4))


def reference(png):
    return {"data": base64.b64encode(png).decode(), "mime_type": "image/png"}


class MemoryBudget(FakeGeminiTestCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        # Leased: the bytes and their base64 in the request, 7/3 of the file.
        cls.three_mb = noisy_png(1024, 768, 1)  # 3.1 MB: about 7.3 MB leased
        cls.six_mb = noisy_png(1600, 1000, 2)   # 6.4 MB: about 15 MB leased

    def test_a_call_larger_than_the_whole_budget_is_refused_and_commits_nothing(self):
        server = self.start_imgmcp(extra_args=["--max-inflight-mb", "12"])
        text = error_text(server.call_tool("generate_image", {
            "session_id": "big", "prompt": "invert", "inline": "none",
            "reference_images": [reference(self.six_mb)]}, timeout=60))
        self.assertIn("this generate_image call needs about", text)
        self.assertIn("more than --max-inflight-mb allows (12 MB)", text)
        self.assertEqual(self.fake.requests(), [])
        self.assertIn("unknown session", error_text(server.call_tool(
            "get_image", {"session_id": "big", "inline": "none"})))
        # A call that fits goes ahead.
        ok = structured(server.call_tool("generate_image", {
            "session_id": "big", "prompt": "invert", "inline": "none",
            "reference_images": [reference(self.three_mb)]}, timeout=60))
        self.assertEqual(ok["version"], 1)

    def test_a_call_that_does_not_fit_beside_one_in_flight_is_busy_until_it_ends(self):
        server = self.start_imgmcp(extra_args=["--max-inflight-mb", "14"])
        self.fake.script({"hold": "first"})
        first_id = server.next_id()
        server.send({"jsonrpc": "2.0", "id": first_id, "method": "tools/call", "params": {
            "name": "generate_image",
            "arguments": {"session_id": "one", "prompt": "invert", "inline": "none",
                          "reference_images": [reference(self.three_mb)]}}})
        self.fake.wait(requests=1, held=1)
        # 7.3 MB are held by the first call; another 7.3 MB do not fit in 14.
        busy = error_text(server.call_tool("edit_image", {
            "session_id": "two", "prompt": "invert", "inline": "none",
            "image": reference(self.three_mb)}, timeout=60))
        self.assertIn("busy: calls in flight hold", busy)
        self.assertIn("(--max-inflight-mb)", busy)
        self.assertIn("retry when one of them has finished", busy)
        self.assertEqual(len(self.fake.requests()), 1)
        self.fake.release("first")
        self.assertEqual(structured(server.wait_for(lambda m: m.get("id") == first_id,
                                                    timeout=60))["version"], 1)
        # The first call's bytes were given back: the same edit now fits and commits.
        edited = structured(server.call_tool("edit_image", {
            "session_id": "two", "prompt": "invert", "inline": "none",
            "image": reference(self.three_mb)}, timeout=60))
        self.assertEqual(edited["version"], 2)  # the given image is version 1

    def test_no_limit_with_zero(self):
        server = self.start_imgmcp(extra_args=["--max-inflight-mb", "0"])
        ok = structured(server.call_tool("generate_image", {
            "session_id": "z", "prompt": "invert", "inline": "none",
            "reference_images": [reference(self.six_mb)]}, timeout=60))
        self.assertEqual(ok["version"], 1)


if __name__ == "__main__":
    unittest.main()
