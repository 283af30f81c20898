"""The real imgmcp binary with `--backend gemini` against tests/fake_gemini: generation and edits
really happen, every fault gives an isError an agent can act on and leaves the session unchanged,
cancellation commits nothing, `--backend auto` picks the right backend, and the API key never
leaks into anything imgmcp writes."""
import base64
import hashlib
import os
import shutil
import struct
import tempfile
import time
import unittest

from fake_gemini_support import (MODEL, TEST_KEY, FakeGeminiTestCase, current_version,
                                 files_under, progress_of)
from tools_support import (blocks, center_pixel, error_text, ok_result, pngio, read_bytes,
                           structured, tool_result)

OFFLINE = "offline local backend"
GRADIENT_WEBP_64X32 = ("UklGRlYAAABXRUJQVlA4TEoAAAAvP8AHAAmAIAb8PzuI6H/qBUAQ/s8dRPQ/NdQ2kuJsCP037eFNYiBt"
                       "21C2/aMVSts2YFpWNK9Ajom8SDMCZHN+KMcnf6Dfvh4ZAA==")


def generate(server, session_id, prompt="solid red", **extra):
    return structured(server.call_tool("generate_image", {
        "session_id": session_id, "prompt": prompt, "inline": "none", **extra}))


class GenerateAndEditThroughTheFake(FakeGeminiTestCase):
    def test_generate_then_edit_really_apply_and_use_the_wire_format(self):
        server = self.start_imgmcp()
        resp = server.call_tool("generate_image", {"session_id": "g1", "prompt": "solid red"})
        v1 = structured(resp)
        self.assertEqual((v1["version"], v1["backend"], v1["model"]), (1, "gemini", MODEL))
        self.assertEqual((v1["width"], v1["height"], v1["mime_type"]), (1024, 1024, "image/png"))
        self.assertEqual(center_pixel(v1["path"]), (255, 0, 0))
        self.assertEqual(hashlib.sha256(read_bytes(v1["path"])).hexdigest(), v1["sha256"])
        self.assertIn("gemini backend", blocks(resp, "text")[0]["text"])
        self.assertNotIn(OFFLINE, blocks(resp, "text")[0]["text"])

        v2 = structured(server.call_tool("edit_image", {"session_id": "g1", "prompt": "invert",
                                                        "inline": "none"}))
        self.assertEqual((v2["version"], v2["parent_version"], v2["backend"], v2["model"]),
                         (2, 1, "gemini", MODEL))
        self.assertEqual(center_pixel(v2["path"]), (0, 255, 255))  # cyan

        log = self.fake.requests()
        self.assertEqual(len(log), 2, log)
        for entry in log:
            self.assertEqual(entry["path"], f"/v1beta/models/{MODEL}:generateContent")
            self.assertEqual(entry["api_key_source"], "header")
            self.assertEqual(entry["headers"]["x-goog-api-key"], TEST_KEY)
            self.assertNotIn(TEST_KEY, entry["target"])
            self.assertNotIn("key=", entry["target"])
            self.assertEqual(entry["response_status"], 200)
            config = entry["body"]["generationConfig"]
            self.assertEqual(config["responseModalities"], ["TEXT", "IMAGE"])
        gen, edit = log
        self.assertFalse(gen["images"])
        self.assertEqual(gen["body"]["generationConfig"]["imageConfig"]["aspectRatio"], "1:1")
        self.assertEqual(gen["body"]["contents"][0]["parts"][0]["text"], "solid red")
        # The edit sends the then-current image (v1, exactly its bytes) as a user inlineData part.
        self.assertEqual(edit["body"]["contents"][0]["role"], "user")
        self.assertEqual(edit["body"]["contents"][0]["parts"][0]["text"], "invert")
        self.assertIn("inlineData", edit["body"]["contents"][0]["parts"][1])
        self.assertEqual(edit["images"], [{"declared_mime_type": "image/png",
                                           "sniffed_mime_type": "image/png",
                                           "bytes": v1["bytes"], "sha256": v1["sha256"],
                                           "role": "user", "content": 0}])

    def test_aspect_ratio_and_thought_parts(self):
        server = self.start_imgmcp()
        self.fake.script({"thought_parts": 2})  # a thought text and a magenta draft image first
        sc = generate(server, "t1", "solid red", aspect_ratio="16:9")
        self.assertEqual((sc["width"], sc["height"]), (1344, 768))
        self.assertEqual(center_pixel(sc["path"]), (255, 0, 0))  # the final image, not the draft
        entry = self.fake.requests()[0]
        self.assertEqual(entry["body"]["generationConfig"]["imageConfig"]["aspectRatio"], "16:9")

    def test_jpeg_labelled_png_is_stored_as_the_jpeg_it_is(self):
        server = self.start_imgmcp()
        self.fake.script({"jpeg_labelled_png": True})
        sc = generate(server, "j1", "solid blue")
        self.assertEqual(sc["mime_type"], "image/jpeg")
        self.assertTrue(sc["path"].endswith(".jpg"), sc["path"])
        data = read_bytes(sc["path"])
        self.assertEqual(data[:3], b"\xff\xd8\xff")
        self.assertEqual((len(data), hashlib.sha256(data).hexdigest()), (sc["bytes"], sc["sha256"]))
        full = server.call_tool("get_image", {"session_id": "j1", "inline": "full"})
        self.assertEqual(blocks(full, "image")[0]["mimeType"], "image/jpeg")
        link = blocks(full, "resource_link")[0]
        self.assertEqual(link["mimeType"], "image/jpeg")
        # Editing it sends the JPEG declared as what it is, and the chain goes on.
        edited = structured(server.call_tool("edit_image", {"session_id": "j1", "prompt": "invert",
                                                            "inline": "none"}))
        self.assertEqual(edited["version"], 2)
        image = self.fake.requests()[1]["images"][0]
        self.assertEqual((image["declared_mime_type"], image["sniffed_mime_type"], image["bytes"]),
                         ("image/jpeg", "image/jpeg", sc["bytes"]))

    def answer_with(self, image_bytes, name):
        tmp = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, tmp, True)
        path = os.path.join(tmp, name)
        with open(path, "wb") as f:
            f.write(image_bytes)
        self.fake.script({"fixed_image_file": path})

    def test_a_webp_answer_is_stored_as_is_and_previewed(self):
        # 64x32 lossless WebP (libwebp): red rises left to right, green top to bottom, blue 90.
        webp = base64.b64decode(GRADIENT_WEBP_64X32)
        server = self.start_imgmcp()
        self.answer_with(webp, "answer.webp")
        resp = server.call_tool("generate_image", {"session_id": "w0", "prompt": "anything"})
        sc = structured(resp)
        self.assertEqual((sc["version"], sc["mime_type"], sc["width"], sc["height"]),
                         (1, "image/webp", 64, 32))
        self.assertEqual(read_bytes(sc["path"]), webp)
        [image] = blocks(resp, "image")
        self.assertEqual(image["mimeType"], "image/png")
        preview = pngio.decode_png(base64.b64decode(image["data"]))
        self.assertEqual(preview[:2], (64, 32))
        self.assertEqual(pngio.pixel(preview, 0, 0)[:3], (0, 0, 90))
        self.assertEqual(pngio.pixel(preview, 63, 31)[:3], (255, 255, 90))
        # An edit sends the stored WebP to Gemini as it is, with its own type.
        edited = structured(server.call_tool("edit_image", {"session_id": "w0", "prompt": "invert",
                                                            "inline": "none"}))
        self.assertEqual(edited["version"], 2)
        sent = self.fake.requests()[1]["images"][0]
        self.assertEqual((sent["declared_mime_type"], sent["bytes"]), ("image/webp", len(webp)))

    def test_an_answer_that_cannot_be_previewed_is_committed_and_the_summary_says_why(self):
        # A WebP header with real dimensions but no image data: stored as answered, not
        # decodable for a preview. The result has no image block and points at the version's URI.
        webp = (b"RIFF" + struct.pack("<I", 22) + b"WEBPVP8X" + struct.pack("<I", 10) +
                b"\0" * 4 + (63).to_bytes(3, "little") + (31).to_bytes(3, "little"))
        server = self.start_imgmcp()
        self.answer_with(webp, "answer.webp")
        resp = server.call_tool("generate_image", {"session_id": "w1", "prompt": "anything"})
        sc = structured(resp)
        self.assertEqual((sc["version"], sc["mime_type"], sc["width"], sc["height"]),
                         (1, "image/webp", 64, 32))
        self.assertEqual(read_bytes(sc["path"]), webp)
        self.assertEqual(blocks(resp, "image"), [])
        text = blocks(resp, "text")[0]["text"]
        self.assertIn("no inline preview: could not decode image/webp image", text)
        self.assertIn("read imgmcp://sessions/w1/versions/1 instead", text)

    def test_base_url_flag_overrides_the_environment(self):
        env = self.gemini_env(base_url="http://127.0.0.1:9")  # nothing listens there
        server = self.start_imgmcp(extra_args=["--gemini-base-url", self.fake.base_url], env=env)
        self.assertEqual(generate(server, "b1")["backend"], "gemini")
        self.assertEqual(len(self.fake.requests()), 1)


class FaultsAreClearAndChangeNothing(FakeGeminiTestCase):
    """Each fault on an edit of a session at version 1: an actionable isError (or success after
    retries), the version unchanged on failure, the server still answering."""

    def setUp(self):
        super().setUp()
        self.server = self.start_imgmcp()
        generate(self.server, "f")
        self.fake.reset()

    def edit(self, timeout=60, meta=None):
        return self.server.call_tool("edit_image", {"session_id": "f", "prompt": "invert",
                                                    "inline": "none"}, timeout=timeout, meta=meta)

    def assert_edit_fails(self, *needles):
        text = error_text(self.edit())
        for needle in needles:
            self.assertIn(needle, text)
        self.assertNotIn(TEST_KEY, text)
        self.assertEqual(current_version(self.server, "f"), 1)
        self.assertEqual(self.server.request("ping")["result"], {})
        return text

    def assert_edit_succeeds_as_version_2(self, **kw):
        sc = structured(self.edit(**kw))
        self.assertEqual(sc["version"], 2)
        self.assertEqual(center_pixel(sc["path"]), (0, 255, 255))
        return sc

    def test_429_with_retry_info_then_success_reports_the_retry_as_progress(self):
        self.fake.script({"status": 429, "retry_delay": "1s"})
        started = time.monotonic()
        self.assert_edit_succeeds_as_version_2(meta={"progressToken": "r429"})
        self.assertGreaterEqual(time.monotonic() - started, 1.0)  # RetryInfo was honoured
        self.assertEqual([e["response_status"] for e in self.fake.requests()], [429, 200])
        messages = [p.get("message", "") for p in progress_of(self.server, "r429")]
        retrying = [m for m in messages if "retrying" in m]
        self.assertTrue(retrying, messages)
        self.assertIn("429", retrying[0])

    def test_503_503_200_succeeds(self):
        self.fake.script({"status": 503}, {"status": 503})
        self.assert_edit_succeeds_as_version_2()
        self.assertEqual([e["response_status"] for e in self.fake.requests()], [503, 503, 200])

    def test_invalid_key_says_check_gemini_api_key(self):
        self.fake.configure(invalid_key=TEST_KEY)
        text = self.assert_edit_fails("API_KEY_INVALID", "GEMINI_API_KEY")
        self.assertEqual(len(self.fake.requests()), 1)  # not retried
        self.assertIn("edit_image failed", text)

    def test_403_permission_denied(self):
        self.fake.script({"status": 403, "message": "Permission denied: consumer blocked"})
        self.assert_edit_fails("403", "GEMINI_API_KEY", "consumer blocked")
        self.assertEqual(len(self.fake.requests()), 1)

    def test_a_failed_first_generate_leaves_no_session_behind(self):
        self.fake.script({"status": 403, "message": "Permission denied: consumer blocked"})
        text = error_text(self.server.call_tool("generate_image", {
            "session_id": "never", "prompt": "solid red", "inline": "none"}))
        self.assertIn("403", text)
        # Nothing was committed: the session does not exist, and no resource lists it.
        missing = error_text(self.server.call_tool("get_image", {"session_id": "never"}))
        self.assertIn("unknown session 'never'", missing)
        listed = [r["uri"] for r in self.server.request("resources/list")["result"]["resources"]]
        self.assertFalse([u for u in listed if "never" in u], listed)
        # The next generate starts it at version 1.
        self.assertEqual(generate(self.server, "never")["version"], 1)

    def test_unknown_model_404_names_the_model(self):
        data_dir = tempfile.mkdtemp(prefix="imgmcp-test-")
        self.addCleanup(shutil.rmtree, data_dir, True)
        first = self.start_imgmcp(data_dir=data_dir)
        generate(first, "m")
        self.fake.reset()
        # A second process on the same data dir, configured with a model the fake does not know.
        bad = self.start_imgmcp(extra_args=["--gemini-model", "gemini-no-such-image"],
                                data_dir=data_dir)
        text = error_text(bad.call_tool("edit_image", {"session_id": "m", "prompt": "invert"}))
        self.assertIn("404", text)
        self.assertIn("gemini-no-such-image", text)
        self.assertIn("model", text)
        self.assertEqual(current_version(bad, "m"), 1)
        self.assertEqual([e["model"] for e in self.fake.requests()], ["gemini-no-such-image"])

    def test_prompt_blocked(self):
        self.fake.script({"block_reason": "SAFETY"})
        self.assert_edit_fails("prompt blocked", "SAFETY", "Rephrase")
        self.assertEqual(len(self.fake.requests()), 1)

    def test_image_safety_carries_the_finish_message(self):
        self.fake.script({"finish_reason": "IMAGE_SAFETY",
                          "finish_message": "Unable to show the generated image."})
        self.assert_edit_fails("IMAGE_SAFETY", "Unable to show the generated image.")
        self.assertEqual(len(self.fake.requests()), 1)

    def test_text_only_refusal_carries_the_model_text(self):
        self.fake.script({"text_only": "I can't make that picture. Should it be a cat?"})
        self.assert_edit_fails("no image", "I can't make that picture. Should it be a cat?")

    def test_malformed_json_is_retried_once_then_reported(self):
        self.fake.script({"malformed_json": True}, {"malformed_json": True})
        self.assert_edit_fails("not valid JSON")
        self.assertEqual(len(self.fake.requests()), 2)

    def test_malformed_json_once_then_success(self):
        self.fake.script({"malformed_json": True})
        self.assert_edit_succeeds_as_version_2()

    def test_persistent_503_gives_up_within_the_budget_with_a_clear_error(self):
        server = self.start_imgmcp(extra_args=["--gemini-timeout", "4"])
        generate(server, "p")
        self.fake.reset()
        self.fake.script(*[{"status": 503}] * 8)
        started = time.monotonic()
        text = error_text(server.call_tool("edit_image", {"session_id": "p", "prompt": "invert"},
                                           timeout=30))
        self.assertLess(time.monotonic() - started, 6)
        for needle in ("deadline", "503", "temporarily unavailable"):
            self.assertIn(needle, text)
        self.assertGreaterEqual(len(self.fake.requests()), 2)
        self.assertEqual(current_version(server, "p"), 1)

    def test_a_delay_past_the_gemini_timeout_is_a_deadline_error(self):
        server = self.start_imgmcp(extra_args=["--gemini-timeout", "1"])
        generate(server, "d")
        self.fake.reset()
        self.fake.script({"hold": "past the deadline"})  # answered only when the test says so
        text = error_text(server.call_tool("edit_image", {"session_id": "d", "prompt": "invert"},
                                           timeout=30))
        self.assertIn("deadline", text)
        # It gave up at its 1 s budget, not after the fake answered: the fake still holds it.
        self.assertEqual(self.fake.wait(requests=1, held=1)["held"], 1)
        self.fake.release("past the deadline")
        self.assertEqual(current_version(server, "d"), 1)
        self.assertEqual(server.request("ping")["result"], {})


class ApiKeyNeverLeaks(FakeGeminiTestCase):
    def test_key_absent_from_stdout_stderr_and_data_dir_after_many_faults(self):
        server = self.start_imgmcp(extra_args=["--log-level", "debug"])
        generate(server, "k")
        # Faults, several of which echo the key back the way misbehaving proxies do.
        self.fake.script(
            {"status": 400, "message": f"Invalid request for key={TEST_KEY}"},
            {"status": 500, "raw_body": f"<html>upstream error, key {TEST_KEY}</html>"},
            {"status": 500, "raw_body": f"<html>upstream error, key {TEST_KEY}</html>"},
            {"status": 500, "raw_body": f"<html>upstream error, key {TEST_KEY}</html>"},
            {"status": 500, "raw_body": f"<html>upstream error, key {TEST_KEY}</html>"},
            {"status": 500, "raw_body": f"<html>upstream error, key {TEST_KEY}</html>"},
            {"status": 429, "retry_delay": "0.1s", "message": f"quota for {TEST_KEY} exceeded"},
            {"status": 403},
            {"text_only": f"Your key is {TEST_KEY}"},
            {"block_reason": "OTHER"},
            {"finish_reason": "IMAGE_SAFETY", "finish_message": f"blocked for {TEST_KEY}"},
            {"malformed_json": True}, {"malformed_json": True},
        )
        texts = []
        for i in range(8):
            resp = server.call_tool("edit_image", {"session_id": "k", "prompt": f"invert {i}"},
                                    timeout=60, meta={"progressToken": f"p{i}"})
            texts.append(str(tool_result(resp)))
        self.fake.configure(invalid_key=TEST_KEY)
        texts.append(str(tool_result(server.call_tool(
            "edit_image", {"session_id": "k", "prompt": "invert"}))))
        self.fake.reset()
        self.assertEqual(structured(server.call_tool("edit_image", {
            "session_id": "k", "prompt": "invert", "inline": "full"}))["version"], 2)
        ok_result(server.call_tool("get_image", {"session_id": "k", "version": 1,
                                                 "inline": "full"}))
        for text in texts:
            self.assertNotIn(TEST_KEY, text)
        self.assertTrue(any("[redacted]" in t for t in texts), texts)
        self.assertEqual(current_version(server, "k"), 2)

        server.close_stdin()
        self.assertEqual(server.wait_exit(), 0)
        key = TEST_KEY.encode()
        self.assertTrue(server.raw_stdout)
        for line in server.raw_stdout:
            self.assertNotIn(key, line)
        self.assertIn("gemini", server.stderr)  # something was logged
        self.assertNotIn(TEST_KEY, server.stderr)
        scanned = 0
        prompt_seen = False  # positive control: the scan does see what imgmcp stores
        for path in files_under(server.data_dir):
            scanned += 1
            content = read_bytes(path)
            self.assertNotIn(key, content, path)
            prompt_seen = prompt_seen or b"solid red" in content
        self.assertGreaterEqual(scanned, 3)  # the database and the image files at least
        self.assertTrue(prompt_seen, "the stored prompt was not found by the scan")


class AutoBackend(FakeGeminiTestCase):
    def test_auto_with_a_key_uses_gemini(self):
        server = self.start_imgmcp(backend="auto")
        resp = server.call_tool("generate_image", {"session_id": "a", "prompt": "solid red",
                                                   "inline": "none"})
        self.assertEqual(structured(resp)["backend"], "gemini")
        self.assertNotIn(OFFLINE, blocks(resp, "text")[0]["text"])
        self.assertEqual(len(self.fake.requests()), 1)

    def test_auto_without_a_key_uses_local_and_every_result_says_so(self):
        server = self.start_imgmcp(backend="auto", env={"GEMINI_BASE_URL": self.fake.base_url})
        self.assertIn(OFFLINE, server.wait_for_stderr(OFFLINE))
        results = [
            server.call_tool("generate_image", {"session_id": "l", "prompt": "solid red",
                                                "inline": "none"}),
            server.call_tool("edit_image", {"session_id": "l", "prompt": "invert",
                                            "inline": "none"}),
        ]
        self.assertEqual(center_pixel(structured(results[1])["path"]), (0, 255, 255))
        results += [
            server.call_tool("get_image", {"session_id": "l"}),
            server.call_tool("reset_session", {"session_id": "l", "to_version": 1}),
            server.call_tool("reset_session", {"session_id": "l"}),
            server.call_tool("get_image", {"session_id": "l"}),
        ]
        for resp in results:
            result = ok_result(resp)
            self.assertIn(OFFLINE, result["content"][0]["text"])
            self.assertEqual(result["structuredContent"]["backend"], "local")
        self.assertEqual(self.fake.requests(), [])

    def test_auto_without_a_key_backend_errors_say_so_too(self):
        server = self.start_imgmcp(backend="auto", env={})
        generate(server, "le")
        text = error_text(server.call_tool("edit_image", {
            "session_id": "le", "prompt": "make the sky a stormy purple"}))
        self.assertIn(OFFLINE, text)


class TwoProcesses(FakeGeminiTestCase):
    def test_an_edit_waiting_for_another_process_says_so_then_applies_after_it(self):
        data_dir = tempfile.mkdtemp(prefix="imgmcp-test-")
        self.addCleanup(shutil.rmtree, data_dir, True)
        first = self.start_imgmcp(data_dir=data_dir)
        generate(first, "shared")
        second = self.start_imgmcp(data_dir=data_dir)
        self.fake.reset()
        # The first process's edit holds the session while its Gemini call is held at the fake.
        self.fake.script({"hold": "first process"})
        slow_id = first.next_id()
        first.send({"jsonrpc": "2.0", "id": slow_id, "method": "tools/call", "params": {
            "name": "edit_image",
            "arguments": {"session_id": "shared", "prompt": "invert", "inline": "none"}}})
        self.fake.wait(requests=1, held=1)
        waited_id = second.next_id()
        second.send({"jsonrpc": "2.0", "id": waited_id, "method": "tools/call", "params": {
            "name": "edit_image",
            "arguments": {"session_id": "shared", "prompt": "grayscale", "inline": "none"},
            "_meta": {"progressToken": "w"}}})
        try:
            waiting = second.wait_for(
                lambda m: m.get("method") == "notifications/progress"
                and m["params"]["progressToken"] == "w"
                and "waiting for another imgmcp process" in m["params"].get("message", ""),
                timeout=30)
            self.assertIn("'shared'", waiting["params"]["message"])
        finally:
            self.fake.release("first process")
        waited = structured(second.wait_for(lambda m: m.get("id") == waited_id, timeout=30))
        slow = structured(first.wait_for(lambda m: m.get("id") == slow_id, timeout=30))
        self.assertEqual((slow["version"], waited["version"], waited["parent_version"]), (2, 3, 2))


class Cancellation(FakeGeminiTestCase):
    def setUp(self):
        super().setUp()
        self.server = self.start_imgmcp()
        generate(self.server, "c")
        self.fake.reset()

    def send_edit(self, token, prompt="invert"):
        rid = self.server.next_id()
        self.server.send({"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": {
            "name": "edit_image",
            "arguments": {"session_id": "c", "prompt": prompt, "inline": "none"},
            "_meta": {"progressToken": token}}})
        return rid

    def test_cancel_during_a_slow_gemini_edit_commits_nothing(self):
        self.fake.script({"hold": "slow"})
        rid = self.send_edit("slow")
        try:
            heartbeat = self.server.wait_for(
                lambda m: m.get("method") == "notifications/progress"
                and m["params"]["progressToken"] == "slow", timeout=10)
            self.assertIn("gemini", heartbeat["params"].get("message", ""))
            self.fake.wait(requests=1, held=1)  # the backend call is in flight, and held
            self.server.notify("notifications/cancelled", {"requestId": rid, "reason": "user"})
            self.assertEqual(current_version(self.server, "c"), 1)
            # The next edit queues behind the cancelled one (FIFO per session). The cancelled
            # edit's Gemini call is never answered, so the turn passes only because imgmcp gave
            # the call up; the next edit becomes version 2: the cancelled one committed nothing.
            sc = structured(self.server.call_tool("edit_image", {"session_id": "c",
                                                                 "prompt": "grayscale",
                                                                 "inline": "none"}, timeout=30))
            self.assertEqual((sc["version"], sc["parent_version"]), (2, 1))
            self.assertEqual(self.fake.wait()["held"], 1, "the cancelled call was answered")
        finally:
            self.fake.release("slow")  # frees the fake's worker; imgmcp dropped the call
        self.assertEqual(self.server.request("ping")["result"], {})
        hist = structured(self.server.call_tool("get_image", {"session_id": "c"}))["history"]
        self.assertEqual([(h["version"], h["prompt"]) for h in hist],
                         [(1, "solid red"), (2, "grayscale")])
        self.assertFalse([m for m in self.server.pending if m.get("id") == rid],
                         "the cancelled request got a response")

    def test_cancel_while_queued_behind_a_slow_edit(self):
        self.fake.script({"hold": "first"})
        first = self.send_edit("first")
        try:
            self.fake.wait(requests=1, held=1)  # the first edit holds the turn
            second = self.send_edit("second", prompt="grayscale")
            queued = self.server.wait_for(
                lambda m: m.get("method") == "notifications/progress"
                and m["params"]["progressToken"] == "second", timeout=10)
            self.assertIn("queued", queued["params"].get("message", ""))
            self.server.notify("notifications/cancelled", {"requestId": second})
            # The cancel is handled before the ping sent after it is answered.
            self.assertEqual(self.server.request("ping")["result"], {})
        finally:
            self.fake.release("first")
        resp = self.server.wait_for(lambda m: m.get("id") == first, timeout=30)
        self.assertEqual(structured(resp)["version"], 2)
        self.assertEqual(self.server.request("ping")["result"], {})
        self.assertEqual(current_version(self.server, "c"), 2)
        self.assertEqual(len(self.fake.requests()), 1)  # the cancelled edit never reached Gemini
        self.assertFalse([m for m in self.server.pending if m.get("id") == second])


if __name__ == "__main__":
    unittest.main()
