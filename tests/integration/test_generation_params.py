"""Generation parameters and conversational edits with the real imgmcp binary.

Against tests/fake_gemini: every (model, image_size, aspect_ratio) the API allows reaches the fake
exactly as the API expects and every one it forbids never leaves imgmcp; thinking and search go
out as thinkingConfig and google_search and the answer's text, usage, finish reason and sources
come back in structuredContent; `context: "chain"` edits replay the turns that led to the edited
version with the model's own parts and signatures (the fake verifies each one and refuses any
alteration), across a process restart, a revert, a fork, an import and a reset. The local backend
honours image_size and the extreme ratios and says what it ignores.

The API's rules are written out below from Google's per-model documentation (docs/generation.md), apart from imgmcp's
own table (gemini_client/models.json) and the fake's (tests/fake_gemini/fake_wire.cpp)."""
import json
import os
import shutil
import sqlite3
import tempfile
import unittest

from fake_gemini_support import FakeGeminiTestCase, current_version
from tools_support import (blocks, center_pixel, error_text, pngio, read_bytes, small_png_b64,
                           start_server, structured)

SIZES = ["512", "1K", "2K", "4K"]
TEN = ["1:1", "2:3", "3:2", "3:4", "4:3", "4:5", "5:4", "9:16", "16:9", "21:9"]
FOURTEEN = TEN + ["1:4", "4:1", "1:8", "8:1"]
MIN_HIGH = ["minimal", "high"]
# model: (sizes, ratios, thinking levels, search, input images). The retired ones are served with
# --allow-retired (for an endpoint that still serves them) and refused without it.
API = {
    "gemini-3.1-flash-lite-image": (["1K"], TEN, MIN_HIGH, False, 14),
    "gemini-nano-banana-2.1": (["1K", "2K", "4K"], FOURTEEN, ["minimal", "medium", "high"], True,
                               14),
    "gemini-3-pro-image": (["1K", "2K", "4K"], TEN, [], True, 14),
    "gemini-3.1-flash-image": (SIZES, FOURTEEN, MIN_HIGH, True, 14),
    "gemini-3.1-flash-image-preview": (SIZES, FOURTEEN, MIN_HIGH, True, 14),
    "gemini-3-pro-image-preview": (["1K", "2K", "4K"], TEN, [], True, 14),
    "gemini-2.5-flash-image": (["1K"], TEN, [], False, 3),
    "gemini-2.5-flash-image-preview": (["1K"], TEN, [], False, 3),
}
CURRENT = ["gemini-3.1-flash-lite-image", "gemini-nano-banana-2.1", "gemini-3-pro-image"]
DEFAULT = "gemini-3.1-flash-lite-image"
NANO = "gemini-nano-banana-2.1"
FLASH = "gemini-3.1-flash-image"  # retired: the one model with image_size 512
PRO = "gemini-3-pro-image"
RETIRED = ["--allow-retired"]


def size_of(path):
    decoded = pngio.decode_png(read_bytes(path))
    return decoded[0], decoded[1]


def text_of(resp):
    return blocks(resp, "text")[0]["text"]


class Base(FakeGeminiTestCase):
    def generate(self, server, session_id, prompt="solid red", **extra):
        return structured(server.call_tool("generate_image", {
            "session_id": session_id, "prompt": prompt, "inline": "none", **extra}))

    def edit(self, server, session_id, prompt, **extra):
        return server.call_tool("edit_image", {
            "session_id": session_id, "prompt": prompt, "inline": "none", **extra})

    def last_request(self):
        log = self.fake.requests()
        self.assertTrue(log, "nothing reached the fake")
        return log[-1]

    def tool_schema(self, server, name):
        tools = server.request("tools/list")["result"]["tools"]
        return next(t for t in tools if t["name"] == name)


class CombinationsReachTheFakeAsTheApiExpects(Base):
    def setUp(self):
        super().setUp()
        # A fixed small answer keeps hundreds of calls fast; pixel sizes are checked below.
        tmp = tempfile.mkdtemp(prefix="imgmcp-test-")
        self.addCleanup(shutil.rmtree, tmp, True)
        self.answer = os.path.join(tmp, "answer.png")
        with open(self.answer, "wb") as f:
            f.write(pngio.solid_png(8, 8, (10, 200, 30)))
        self.fake.configure(fixed_image_file=self.answer)

    def test_every_allowed_combination_reaches_the_fake_exactly_as_the_api_expects(self):
        server = self.start_imgmcp(extra_args=RETIRED)
        schema = self.tool_schema(server, "generate_image")["inputSchema"]["properties"]
        self.assertEqual(schema["model"]["enum"][0], DEFAULT)
        self.assertEqual(sorted(schema["model"]["enum"]), sorted(API))
        self.assertEqual(schema["image_size"]["enum"], SIZES)
        self.assertEqual(schema["aspect_ratio"]["enum"], FOURTEEN)
        self.assertEqual(schema["thinking"]["enum"], ["minimal", "medium", "high"])
        calls = 0
        for model, (sizes, ratios, _, _, _) in API.items():
            for size in [None, *sizes]:
                for ratio in ratios:
                    args = {"model": model, "aspect_ratio": ratio}
                    if size:
                        args["image_size"] = size
                    sc = self.generate(server, "combos", **args)
                    calls += 1
                    self.assertEqual((sc["model"], sc["params"]["model"]), (model, model))
                    entry = self.last_request()
                    where = f"{model} {size} {ratio}"
                    self.assertEqual(entry["path"], self.generate_path(model),
                                     where)
                    self.assertEqual(entry["response_status"], 200, where)
                    expected = {"aspectRatio": ratio, **({"imageSize": size} if size else {})}
                    self.assertEqual(entry["body"]["generationConfig"]["imageConfig"], expected,
                                     where)
                    self.assertNotIn("thinkingConfig", entry["body"]["generationConfig"])
                    self.assertNotIn("tools", entry["body"])
        self.assertEqual(len(self.fake.requests()), calls)
        self.assertEqual(calls, 336)

    def test_every_forbidden_combination_never_leaves_imgmcp(self):
        server = self.start_imgmcp(extra_args=RETIRED)
        refused = 0
        for model, (sizes, ratios, levels, search, images) in API.items():
            for size in SIZES:
                for ratio in FOURTEEN:
                    if size in sizes and ratio in ratios:
                        continue
                    text = error_text(server.call_tool("generate_image", {
                        "session_id": "never", "prompt": "solid red", "model": model,
                        "image_size": size, "aspect_ratio": ratio}))
                    refused += 1
                    self.assertIn(f"model {model} does not support", text)
                    self.assertIn("it supports", text)
            if not levels:
                text = error_text(server.call_tool("generate_image", {
                    "session_id": "never", "prompt": "x", "model": model, "thinking": "high"}))
                self.assertIn(f"model {model} does not take a thinking level", text)
                self.assertIn(f"offered by {DEFAULT}", text)
                refused += 1
            elif "medium" not in levels:
                text = error_text(server.call_tool("generate_image", {
                    "session_id": "never", "prompt": "x", "model": model, "thinking": "medium"}))
                self.assertIn(f"model {model} does not take thinking medium: it takes minimal or "
                              f"high (offered by {NANO})", text)
                refused += 1
            if not search:
                text = error_text(server.call_tool("generate_image", {
                    "session_id": "never", "prompt": "x", "model": model, "search": True}))
                self.assertIn(f"model {model} does not support search", text)
                self.assertIn(f"offered by {NANO}", text)
                refused += 1
            if images < 14:
                too_many = [{"data": small_png_b64(), "mime_type": "image/png"}] * (images + 1)
                text = error_text(server.call_tool("generate_image", {
                    "session_id": "never", "prompt": "x", "model": model,
                    "reference_images": too_many}))
                self.assertIn(f"model {model} takes at most {images} input images", text)
                refused += 1
        # Edits too, before the base image is read or anything is sent.
        self.generate(server, "e", model=NANO)
        text = error_text(self.edit(server, "e", "invert", model=DEFAULT, image_size="2K"))
        self.assertIn(f"model {DEFAULT} does not support image_size 2K: it supports 1K only", text)
        self.assertIn(f"offered by {NANO}", text)
        text = error_text(self.edit(server, "e", "invert", model="gemini-9-image"))
        self.assertIn("'model' is \"gemini-9-image\"; allowed: ", text)
        self.assertEqual(len(self.fake.requests()), 1)  # the generation of "e" only
        # size/ratio, no thinking level, not that level, search, images
        self.assertEqual(refused, 204 + 4 + 3 + 3 + 2)
        self.assertIn("unknown session", error_text(server.call_tool(
            "get_image", {"session_id": "never"})))

    def test_models_flag_and_env_are_the_allow_list(self):
        server = self.start_imgmcp(extra_args=["--model", NANO, "--models", f"{NANO},{PRO}"])
        props = self.tool_schema(server, "edit_image")["inputSchema"]["properties"]
        self.assertEqual(props["model"]["enum"], [NANO, PRO])
        self.assertEqual(props["image_size"]["enum"], ["1K", "2K", "4K"])
        self.assertEqual(props["thinking"]["enum"], ["minimal", "medium", "high"])
        self.assertIn(f"{PRO}: image_size 1K 2K 4K", props["model"]["description"])
        self.assertIn(f"{NANO}: image_size 1K 2K 4K; aspect_ratio 1:1", props["model"]["description"])
        self.assertIn("thinking minimal|medium|high", props["model"]["description"])
        self.assertEqual(props["context"]["enum"], ["image", "chain"])
        text = error_text(server.call_tool("generate_image", {"prompt": "x", "model": DEFAULT}))
        self.assertIn(f"'model' is \"{DEFAULT}\"", text)
        self.assertEqual(self.generate(server, "m")["model"], NANO)  # the default
        self.assertEqual(self.last_request()["model"], NANO)

        env = {**self.gemini_env(), "IMGMCP_MODELS": f"{DEFAULT}, {PRO}"}
        server = self.start_imgmcp(env=env)
        props = self.tool_schema(server, "generate_image")["inputSchema"]["properties"]
        self.assertEqual(props["model"]["enum"], [DEFAULT, PRO])
        self.assertEqual(props["image_size"]["enum"], ["1K", "2K", "4K"])
        self.assertEqual(props["aspect_ratio"]["enum"], TEN)
        self.assertEqual(props["thinking"]["enum"], MIN_HIGH)

    def test_a_default_model_outside_the_allow_list_stops_the_server_at_start(self):
        from mcp_harness import ServerProcess
        server = ServerProcess(args=["--backend", self.backend, "--models", PRO],
                               env=self.gemini_env())
        self.addCleanup(server.__exit__, None, None, None)
        self.assertNotEqual(server.proc.wait(timeout=30), 0)
        # The process may be gone before its last stderr line has been read: wait for the line
        # (or the end of stderr).
        needle = f"the default model {DEFAULT} is not in the allowed models"
        self.assertIn(needle, server.wait_for_stderr(needle, timeout=30))


class WhatComesBack(Base):
    def test_pixel_sizes_follow_the_size_and_ratio(self):
        server = self.start_imgmcp(extra_args=RETIRED)
        for model, size, ratio, expected in [(FLASH, "512", "1:8", (192, 1536)),
                                             (NANO, "2K", "16:9", (2688, 1536)),
                                             (NANO, "1K", "1:4", (512, 2048)),
                                             (PRO, "1K", "4:3", (1184, 864)),
                                             (DEFAULT, None, "4:5", (896, 1152))]:
            args = {"model": model, "aspect_ratio": ratio, **({"image_size": size} if size else {})}
            sc = self.generate(server, "px", "solid teal", **args)
            self.assertEqual((sc["width"], sc["height"]), expected, args)
            self.assertEqual(size_of(sc["path"]), expected)
            self.assertEqual(center_pixel(sc["path"]), (0, 128, 128))
        # An edit with image_size: only imageSize goes out; the result is about that many pixels.
        resp = self.edit(server, "px", "invert", model=FLASH, image_size="512")
        sc = structured(resp)
        self.assertEqual(self.last_request()["body"]["generationConfig"]["imageConfig"],
                         {"imageSize": "512"})
        self.assertAlmostEqual(sc["width"] * sc["height"], 512 * 512, delta=512 * 4)
        self.assertAlmostEqual(sc["width"] / sc["height"], 896 / 1152, delta=0.01)
        self.assertEqual(sc["params"], {"model": FLASH, "image_size": "512"})

    def test_grounding_sources_and_model_text_reach_structured_content(self):
        server = self.start_imgmcp()
        resp = server.call_tool("generate_image", {
            "session_id": "g", "prompt": "solid navy", "model": NANO, "search": True,
            "inline": "none"})
        sc = structured(resp)
        self.assertEqual(self.last_request()["body"]["tools"], [{"google_search": {}}])
        self.assertEqual([s["title"] for s in sc["sources"]], ["example.org", "weather.example"])
        for source in sc["sources"]:
            self.assertTrue(source["uri"].startswith(
                "https://vertexaisearch.cloud.google.com/grounding-api-redirect/"), source)
        self.assertEqual(sc["model_text"], "Here is the image you asked for.")
        self.assertEqual(sc["text"], sc["model_text"])
        self.assertEqual(sc["finish_reason"], "STOP")
        self.assertEqual(sc["usage"]["candidatesTokenCount"], 1120 + 12)
        self.assertGreater(sc["usage"]["promptTokenCount"], 0)
        self.assertEqual(sc["params"], {"model": NANO, "search": True})
        text = text_of(resp)
        self.assertIn('\nModel text: "Here is the image you asked for."', text)
        self.assertIn("\nUsage: prompt ", text)
        self.assertIn("\nFinish reason: STOP", text)
        self.assertIn("\nSources: example.org <https://vertexaisearch", text)
        output = self.tool_schema(server, "generate_image")["outputSchema"]["properties"]
        for field in ("model_text", "usage", "finish_reason", "sources", "params"):
            self.assertIn(field, output)
        # Without search there is no sources field.
        sc = self.generate(server, "g", model=NANO)
        self.assertNotIn("sources", sc)
        self.assertNotIn("tools", self.last_request()["body"])

    def test_thinking_goes_out_as_the_level_and_thoughts_stay_out_of_the_image(self):
        server = self.start_imgmcp()
        sc = self.generate(server, "t", "solid red", thinking="high")
        config = self.last_request()["body"]["generationConfig"]
        self.assertEqual(config["thinkingConfig"], {"thinkingLevel": "HIGH"})
        self.assertGreater(sc["usage"]["thoughtsTokenCount"], 0)
        self.assertEqual(center_pixel(sc["path"]), (255, 0, 0))  # the answer, not a thought
        self.generate(server, "t", "solid red", thinking="minimal")
        self.assertEqual(self.last_request()["body"]["generationConfig"]["thinkingConfig"],
                         {"thinkingLevel": "MINIMAL"})
        # Each model its own levels: Nano Banana 2.1 has a third.
        sc = self.generate(server, "t", "solid red", model=NANO, thinking="medium")
        self.assertEqual(self.last_request()["body"]["generationConfig"]["thinkingConfig"],
                         {"thinkingLevel": "MEDIUM"})
        self.assertGreater(sc["usage"]["thoughtsTokenCount"], 0)
        requests = len(self.fake.requests())
        text = error_text(server.call_tool("generate_image", {
            "session_id": "t", "prompt": "x", "thinking": "medium"}))
        self.assertIn(f"model {DEFAULT} does not take thinking medium: it takes minimal or high "
                      f"(offered by {NANO})", text)
        self.assertEqual(len(self.fake.requests()), requests)

    def test_history_records_each_versions_parameters(self):
        server = self.start_imgmcp()
        self.generate(server, "h", model=NANO, image_size="2K", aspect_ratio="4:1",
                      thinking="medium")
        structured(self.edit(server, "h", "invert", model=NANO, context="chain"))
        structured(server.call_tool("reset_session", {"session_id": "h", "to_version": 1}))
        sc = structured(server.call_tool("get_image", {"session_id": "h", "inline": "none"}))
        history = sc["history"]
        self.assertEqual(history[0]["params"], {"model": NANO, "image_size": "2K",
                                                "aspect_ratio": "4:1", "thinking": "medium"})
        self.assertEqual(history[1]["params"], {"model": NANO, "context": "chain",
                                                "replayed_versions": [1]})
        self.assertNotIn("params", history[2])  # a revert makes nothing
        one = structured(server.call_tool("get_image", {"session_id": "h", "version": 1,
                                                        "inline": "none"}))
        self.assertEqual(one["params"]["image_size"], "2K")


class ChainEdits(Base):
    """Conversational edits on Nano Banana 2.1: the fake verifies every replayed signature."""

    def start(self, **kw):
        return self.start_imgmcp(extra_args=["--model", NANO, *kw.pop("extra_args", [])], **kw)

    def replayed(self, entry):
        """(user texts, model images' sha256, signatures per model turn) of a logged request."""
        turns = entry["turns"]
        users = [" ".join(t["texts"]) for t in turns if t["role"] == "user"]
        model_images = [i["sha256"] for i in entry["images"] if i["role"] == "model"]
        signatures = [t["signatures"] for t in turns if t["role"] == "model"]
        return users, model_images, signatures

    def test_a_chain_after_three_edits_replays_the_right_turns_across_a_restart_and_a_revert(
            self):
        data_dir = tempfile.mkdtemp(prefix="imgmcp-test-")
        self.addCleanup(shutil.rmtree, data_dir, True)
        server = self.start(data_dir=data_dir)
        prompts = ["solid red", "invert", "grayscale", "draw square blue at 100,100 size 50",
                   "flip horizontal"]
        v = [None, self.generate(server, "c", prompts[0])]
        v.append(structured(self.edit(server, "c", prompts[1])))  # context image
        v.append(structured(self.edit(server, "c", prompts[2], context="chain")))
        v.append(structured(self.edit(server, "c", prompts[3], context="chain")))
        resp = self.edit(server, "c", prompts[4], context="chain")
        v5 = structured(resp)
        self.assertEqual(v5["version"], 5)
        self.assertEqual(v5["params"]["replayed_versions"], [1, 2, 3, 4])
        self.assertIn("Context: chain replayed the turns of versions 1, 2, 3, 4", text_of(resp))
        entry = self.last_request()
        self.assertEqual(entry["response_status"], 200)
        self.assertEqual([t["role"] for t in entry["turns"]], ["user", "model"] * 4 + ["user"])
        users, model_images, signatures = self.replayed(entry)
        self.assertEqual(users, prompts)
        self.assertEqual(model_images, [v[i]["sha256"] for i in range(1, 5)])
        self.assertEqual(signatures, [2, 2, 2, 2])  # each answer's text and image part verified
        # Version 2 was an image-context edit: its instruction is replayed with version 1's image.
        user_images = [i for i in entry["images"] if i["role"] == "user"]
        self.assertEqual([(i["content"], i["sha256"]) for i in user_images],
                         [(2, v[1]["sha256"])])
        self.assertEqual(entry["turns"][-1]["images"], 0)  # the base travels as the last answer
        # The chain's result is the replayed image flipped (the fake edits the last answer).
        self.assertEqual(size_of(v5["path"]), size_of(v[4]["path"]))
        server.close_stdin()
        server.wait_exit()

        # A new process replays from what was stored: the last four turns, still verifiable.
        server = self.start(data_dir=data_dir)
        v6 = structured(self.edit(server, "c", "invert", context="chain"))
        self.assertEqual(v6["params"]["replayed_versions"], [2, 3, 4, 5])
        users, model_images, signatures = self.replayed(self.last_request())
        self.assertEqual(users, prompts[1:] + ["invert"])
        self.assertEqual(model_images[-1], v5["sha256"])
        self.assertEqual(signatures, [2, 2, 2, 2])

        # Still in the new process: a revert to version 4, then a chain replays the four turns
        # that made version 4 (not 5 and 6), each answer's image and signatures as first stored.
        reverted = structured(server.call_tool("reset_session", {"session_id": "c",
                                                                 "to_version": 4}))
        self.assertEqual(reverted["version"], 7)
        v8 = structured(self.edit(server, "c", "flip vertical", context="chain"))
        self.assertEqual((v8["version"], v8["parent_version"]), (8, 7))
        self.assertEqual(v8["params"]["replayed_versions"], [1, 2, 3, 4])
        entry = self.last_request()
        self.assertEqual(entry["response_status"], 200)
        users, model_images, signatures = self.replayed(entry)
        self.assertEqual(users, prompts[:4] + ["flip vertical"])
        self.assertEqual(model_images, [v[i]["sha256"] for i in range(1, 5)])
        self.assertEqual(signatures, [2, 2, 2, 2])
        self.assertIsNone(entry.get("signature_problem"))

    def test_a_chain_after_a_revert_replays_the_turns_that_led_to_the_reverted_image(self):
        server = self.start()
        v1 = self.generate(server, "r", "solid red")
        v2 = structured(self.edit(server, "r", "invert"))
        structured(self.edit(server, "r", "grayscale"))
        reverted = structured(server.call_tool("reset_session", {"session_id": "r",
                                                                 "to_version": 2}))
        self.assertEqual(reverted["version"], 4)
        sc = structured(self.edit(server, "r", "flip vertical", context="chain"))
        self.assertEqual(sc["params"]["replayed_versions"], [1, 2])
        users, model_images, signatures = self.replayed(self.last_request())
        self.assertEqual(users, ["solid red", "invert", "flip vertical"])
        self.assertEqual(model_images, [v1["sha256"], v2["sha256"]])
        self.assertEqual(signatures, [2, 2])
        self.assertEqual(sc["parent_version"], 4)

    def test_a_fork_an_import_and_a_reset_start_where_they_should(self):
        server = self.start()
        self.generate(server, "f", "solid red")
        structured(self.edit(server, "f", "invert"))
        structured(self.edit(server, "f", "grayscale"))
        fork = structured(self.edit(server, "f", "flip horizontal", context="chain",
                                    from_version=1))
        self.assertEqual(fork["params"]["replayed_versions"], [1])
        self.assertEqual(self.replayed(self.last_request())[0], ["solid red", "flip horizontal"])

        # An outside image has no earlier turn: the image goes with the instruction, and says so.
        resp = self.edit(server, "imp", "invert", context="chain",
                         image={"data": small_png_b64(), "mime_type": "image/png"})
        self.assertIn("Context: chain found no earlier turn to replay (version 1 is an imported "
                      "image)", text_of(resp))
        entry = self.last_request()
        self.assertEqual(len(entry["turns"]), 1)
        self.assertEqual(entry["images"][0]["role"], "user")
        self.assertNotIn("replayed_versions", structured(resp)["params"])
        nxt = structured(self.edit(server, "imp", "grayscale", context="chain"))
        self.assertEqual(nxt["params"]["replayed_versions"], [2])
        user_images = [i for i in self.last_request()["images"] if i["role"] == "user"]
        self.assertEqual(len(user_images), 1)  # version 2's instruction went with the import

        # After a reset, a new generation starts a new chain.
        structured(server.call_tool("reset_session", {"session_id": "f"}))
        self.generate(server, "f", "solid blue")
        sc = structured(self.edit(server, "f", "invert", context="chain"))
        self.assertEqual(sc["params"]["replayed_versions"], [sc["version"] - 1])
        self.assertEqual(self.replayed(self.last_request())[0], ["solid blue", "invert"])

    def test_chain_turns_and_the_model_bound_the_replay(self):
        server = self.start(extra_args=["--chain-turns", "2"])
        self.generate(server, "b", "solid red")
        for prompt in ("invert", "grayscale", "invert"):
            structured(self.edit(server, "b", prompt, context="chain"))
        sc = structured(self.edit(server, "b", "flip vertical", context="chain"))
        self.assertEqual(sc["params"]["replayed_versions"], [3, 4])
        # Another model cannot take this model's signatures: nothing is replayed.
        resp = self.edit(server, "b", "invert", context="chain", model=PRO)
        self.assertIn(f"was made by {NANO}", text_of(resp))
        self.assertEqual(len(self.last_request()["turns"]), 1)
        self.assertEqual(self.last_request()["model"], PRO)

    def test_an_altered_replay_is_refused_by_the_fake_and_nothing_is_committed(self):
        data_dir = tempfile.mkdtemp(prefix="imgmcp-test-")
        self.addCleanup(shutil.rmtree, data_dir, True)
        server = self.start(data_dir=data_dir)
        self.generate(server, "a", "solid red")
        # Change one character of the stored image part's signature.
        db = sqlite3.connect(os.path.join(data_dir, "imgmcp.db"))
        self.addCleanup(db.close)
        (details,) = db.execute(
            "SELECT details FROM versions WHERE session_id='a' AND version=1").fetchone()
        stored = json.loads(details)
        replay = json.loads(stored["turn"]["replay"])
        part = replay["parts"][replay["image"]]
        signature = part["thoughtSignature"]
        part["thoughtSignature"] = ("B" if signature[0] != "B" else "C") + signature[1:]
        stored["turn"]["replay"] = json.dumps(replay)
        with db:
            db.execute("UPDATE versions SET details=? WHERE session_id='a' AND version=1",
                       (json.dumps(stored),))
        text = error_text(self.edit(server, "a", "invert", context="chain"))
        self.assertIn("Image part is missing a thought_signature in content position 2", text)
        self.assertEqual(self.last_request()["signature_problem"], "altered")
        self.assertEqual(current_version(server, "a"), 1)
        # The same edit without the chain still works: the stored image is intact.
        self.assertEqual(structured(self.edit(server, "a", "invert"))["version"], 2)


class LocalBackendParameters(unittest.TestCase):
    def test_local_honours_image_size_and_the_extreme_ratios_and_says_what_it_ignores(self):
        server = start_server(self)
        tools = server.request("tools/list")["result"]["tools"]
        props = next(t for t in tools if t["name"] == "generate_image")["inputSchema"]["properties"]
        self.assertEqual(props["model"]["enum"], ["imgmcp-local-1"])
        self.assertEqual(props["image_size"]["enum"], SIZES)
        self.assertEqual(props["aspect_ratio"]["enum"], FOURTEEN)
        for size, ratio, expected in [("512", "8:1", (1536, 192)), ("2K", "1:4", (1024, 4096)),
                                      (None, "1:8", (384, 3072))]:
            args = {"session_id": "l", "prompt": "solid orange", "inline": "none",
                    "aspect_ratio": ratio, **({"image_size": size} if size else {})}
            sc = structured(server.call_tool("generate_image", args))
            self.assertEqual((sc["width"], sc["height"]), expected)
            self.assertEqual(size_of(sc["path"]), expected)
            self.assertEqual(sc["model"], "imgmcp-local-1")
        resp = server.call_tool("edit_image", {
            "session_id": "l", "prompt": "invert", "inline": "none", "image_size": "512",
            "thinking": "high", "search": True, "context": "chain"})
        sc = structured(resp)
        self.assertAlmostEqual(sc["width"] * sc["height"], 512 * 512, delta=512 * 4)
        self.assertIn("Ignored: thinking, search and context chain (no meaning for the local "
                      "backend, which works offline)", text_of(resp))
        self.assertEqual(sc["params"], {"model": "imgmcp-local-1", "image_size": "512",
                                        "thinking": "high", "search": True, "context": "chain"})
        self.assertNotIn("replayed_versions", sc["params"])
        text = error_text(server.call_tool("generate_image", {"prompt": "x",
                                                              "model": "gemini-3-pro-image"}))
        self.assertIn("'model' is \"gemini-3-pro-image\"; allowed: \"imgmcp-local-1\"", text)


if __name__ == "__main__":
    unittest.main()
