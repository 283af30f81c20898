"""The memory budget for work in flight (--max-inflight-mb), against the real binary, the Gemini
fake and the local engine: a call whose images, request, backend work and answer would not fit
the budget alone is refused before anything is read or sent, saying it is larger than the whole
budget; a call that does not fit beside the calls in flight is refused as busy (retry later) and
the budget is whole again once they end. Nothing refused is committed. What the leases do to
resident memory is measured in test_memory_rss.py (unsanitised builds only).
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
        # Leased: the bytes and their base64 in the request, 7/3 of the file; and for the answer
        # of a 1K image (server/tools/call_memory.h) about 11.5 MB more.
        cls.three_mb = noisy_png(1024, 768, 1)  # 3.1 MB: about 19 MB leased
        cls.six_mb = noisy_png(1600, 1000, 2)   # 6.4 MB: about 27 MB leased

    def test_a_call_larger_than_the_whole_budget_is_refused_and_commits_nothing(self):
        server = self.start_imgmcp(extra_args=["--max-inflight-mb", "24"])
        text = error_text(server.call_tool("generate_image", {
            "session_id": "big", "prompt": "invert", "inline": "none",
            "reference_images": [reference(self.six_mb)]}, timeout=60))
        self.assertIn("this generate_image call (making a 1024x1024 image) needs about", text)
        self.assertIn("more than the whole --max-inflight-mb budget (24 MB) allows, so it cannot "
                      "run even alone", text)
        self.assertEqual(self.fake.requests(), [])
        self.assertIn("unknown session", error_text(server.call_tool(
            "get_image", {"session_id": "big", "inline": "none"})))
        # A call that fits goes ahead.
        ok = structured(server.call_tool("generate_image", {
            "session_id": "big", "prompt": "invert", "inline": "none",
            "reference_images": [reference(self.three_mb)]}, timeout=60))
        self.assertEqual(ok["version"], 1)

    def test_a_call_that_does_not_fit_beside_one_in_flight_is_busy_until_it_ends(self):
        server = self.start_imgmcp(extra_args=["--max-inflight-mb", "24"])
        self.fake.script({"hold": "first"})
        first_id = server.next_id()
        server.send({"jsonrpc": "2.0", "id": first_id, "method": "tools/call", "params": {
            "name": "generate_image",
            "arguments": {"session_id": "one", "prompt": "invert", "inline": "none",
                          "reference_images": [reference(self.three_mb)]}}})
        self.fake.wait(requests=1, held=1)
        # 19 MB are held by the first call; the edit's 7.3 MB do not fit beside them in 24.
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

    def test_a_generation_without_references_leases_the_answer_it_will_get(self):
        # The answer of a 1K image is leased before anything is sent: about 11.5 MB.
        # --allow-retired: 3.1 Flash Image (retired) is the model with image_size 512.
        server = self.start_imgmcp(extra_args=["--max-inflight-mb", "8", "--allow-retired"])
        text = error_text(server.call_tool("generate_image", {
            "session_id": "answer", "prompt": "a lighthouse", "inline": "none"}, timeout=60))
        self.assertIn("this generate_image call (making a 1024x1024 image) needs about 12 MB",
                      text)
        self.assertIn("more than the whole --max-inflight-mb budget (8 MB)", text)
        self.assertIn("ask for a smaller image_size", text)
        self.assertEqual(self.fake.requests(), [])
        self.assertIn("unknown session", error_text(server.call_tool(
            "get_image", {"session_id": "answer", "inline": "none"})))
        # A smaller image's answer fits.
        ok = structured(server.call_tool("generate_image", {
            "session_id": "answer", "prompt": "a lighthouse", "inline": "none",
            "model": "gemini-3.1-flash-image", "image_size": "512"}, timeout=60))
        self.assertEqual(ok["version"], 1)

    def test_generations_without_references_are_busy_beside_one_in_flight(self):
        # One answer of a 1K image (about 12 MB) fits in 16 MB; two do not.
        server = self.start_imgmcp(extra_args=["--max-inflight-mb", "16"])
        self.fake.script({"hold": "first"})
        first_id = server.next_id()
        server.send({"jsonrpc": "2.0", "id": first_id, "method": "tools/call", "params": {
            "name": "generate_image",
            "arguments": {"session_id": "one", "prompt": "a lighthouse", "inline": "none"}}})
        self.fake.wait(requests=1, held=1)
        busy = error_text(server.call_tool("generate_image", {
            "session_id": "two", "prompt": "a harbour", "inline": "none"}, timeout=60))
        self.assertIn("busy: calls in flight hold 12 MB of the 16 MB", busy)
        self.assertIn("retry when one of them has finished", busy)
        self.assertEqual(len(self.fake.requests()), 1)
        self.fake.release("first")
        self.assertEqual(structured(server.wait_for(lambda m: m.get("id") == first_id,
                                                    timeout=60))["version"], 1)
        again = structured(server.call_tool("generate_image", {
            "session_id": "two", "prompt": "a harbour", "inline": "none"}, timeout=60))
        self.assertEqual(again["version"], 1)

    def test_a_local_4k_generation_larger_than_the_whole_budget_is_refused(self):
        # Its 4096x4096 frame and the PNG written from it: about 129 MB (LocalBackend's estimate).
        server = self.start_imgmcp(extra_args=["--max-inflight-mb", "64"], backend="local")
        text = error_text(server.call_tool("generate_image", {
            "session_id": "big", "prompt": "a lighthouse", "image_size": "4K", "inline": "none"},
            timeout=120))
        self.assertIn("this generate_image call (making a 4096x4096 image) needs about 129 MB",
                      text)
        self.assertIn("more than the whole --max-inflight-mb budget (64 MB)", text)
        self.assertIn("unknown session", error_text(server.call_tool(
            "get_image", {"session_id": "big", "inline": "none"})))
        ok = structured(server.call_tool("generate_image", {
            "session_id": "big", "prompt": "a lighthouse", "image_size": "1K", "inline": "none"},
            timeout=120))
        self.assertEqual(ok["version"], 1)

    def test_a_local_edit_that_makes_a_large_image_is_refused_in_its_turn(self):
        # A 64x64 image resized to 4000x4000: the new frame and its PNG, about 123 MB.
        server = self.start_imgmcp(extra_args=["--max-inflight-mb", "64"], backend="local")
        small = pngio.solid_png(64, 64, (200, 40, 40))
        text = error_text(server.call_tool("edit_image", {
            "session_id": "grow", "prompt": "resize 4000x4000", "inline": "none",
            "image": reference(small)}, timeout=120))
        self.assertIn("this edit_image call (making a 4000x4000 image) needs about", text)
        self.assertIn("more than the whole --max-inflight-mb budget (64 MB)", text)
        # Not even the given image was saved.
        self.assertIn("unknown session", error_text(server.call_tool(
            "get_image", {"session_id": "grow", "inline": "none"})))
        ok = structured(server.call_tool("edit_image", {
            "session_id": "grow", "prompt": "resize 400x400", "inline": "none",
            "image": reference(small)}, timeout=120))
        self.assertEqual(ok["version"], 2)

    def test_no_limit_with_zero(self):
        server = self.start_imgmcp(extra_args=["--max-inflight-mb", "0"])
        ok = structured(server.call_tool("generate_image", {
            "session_id": "z", "prompt": "invert", "inline": "none",
            "reference_images": [reference(self.six_mb)]}, timeout=60))
        self.assertEqual(ok["version"], 1)


if __name__ == "__main__":
    unittest.main()
