"""The model table as data, with the real imgmcp binary against tests/fake_gemini.

gemini-nano-banana-2.1 generates at 4K and at 8:1 (its sizes, the extreme ratios, its three
thinking levels); a retired model is refused before any request, naming its date and its
replacement, and goes through with --allow-retired; a --model-table file adds a model that then
works without a rebuild, and corrects a known row; a malformed file stops start-up naming the
file, the row and the key; --list-models prints the table in effect (docs/generation.md, "The
model table")."""
import json
import os
import shutil
import subprocess
import tempfile
import unittest

from fake_gemini_support import FakeGeminiTestCase
from mcp_harness import ServerProcess
from tools_support import error_text, structured

NANO = "gemini-nano-banana-2.1"
DEFAULT = "gemini-3.1-flash-lite-image"
TEN = ["1:1", "2:3", "3:2", "3:4", "4:3", "4:5", "5:4", "9:16", "16:9", "21:9"]
TIMEOUT = 60


def run_imgmcp(*args, env=None):
    """imgmcp run to completion (no MCP session): its CompletedProcess."""
    data = tempfile.mkdtemp(prefix="imgmcp-models-")
    try:
        full_env = {k: v for k, v in os.environ.items()
                    if k not in ("GEMINI_API_KEY", "IMGMCP_MODEL_TABLE", "IMGMCP_BACKEND")}
        full_env.update(env or {})
        return subprocess.run([os.environ["IMGMCP_BIN"], "--data-dir", data, *args],
                              stdin=subprocess.DEVNULL, capture_output=True, text=True,
                              timeout=TIMEOUT, env=full_env, cwd=data)
    finally:
        shutil.rmtree(data, ignore_errors=True)


class TableFiles(FakeGeminiTestCase):
    def write_table(self, rows):
        """A --model-table file holding `rows` (or the raw text `rows`, when a str)."""
        folder = tempfile.mkdtemp(prefix="imgmcp-table-")
        self.addCleanup(shutil.rmtree, folder, True)
        path = os.path.join(folder, "models.json")
        with open(path, "w", encoding="utf-8") as f:
            f.write(rows if isinstance(rows, str) else json.dumps({"models": rows}))
        return path

    def generate(self, server, **arguments):
        return server.call_tool("generate_image", {"session_id": "s", "prompt": "solid teal",
                                                   "inline": "none", **arguments},
                                timeout=TIMEOUT)

    def start_failing(self, args, env=None):
        """A server that must stop at start-up: its exit code and stderr."""
        server = ServerProcess(args=["--backend", "gemini", *args],
                               env=self.gemini_env() if env is None else env)
        self.addCleanup(server.__exit__, None, None, None)
        code = server.proc.wait(timeout=TIMEOUT)
        server.__exit__(None, None, None)
        return code, server.stderr


def new_model_row(model_id):
    """A whole row for a model imgmcp does not know; the fake serves the id as 3.1 Flash-Lite."""
    return {"id": model_id, "status": "preview", "sizes": ["1K"], "aspect_ratios": TEN,
            "max_reference_images": 6, "thinking": ["minimal", "high"], "search": False,
            "input_token_limit": 65536, "output_image_tokens": {"1K": 1120},
            "prices_usd_per_million_tokens": {"input_text": 0.25, "input_image": 0.25,
                                              "output_text": 1.5, "output_image": 30,
                                              "thoughts": 1.5},
            "usd_per_grounded_query": 0}


class NanoBanana21(TableFiles):
    def test_it_generates_at_4k_and_8_to_1_with_its_thinking_levels(self):
        server = self.start_imgmcp(extra_args=["--model", NANO])
        props = server.request("tools/list")["result"]["tools"][0]["inputSchema"]["properties"]
        self.assertEqual(props["model"]["enum"][0], NANO)
        self.assertIn("8:1", props["aspect_ratio"]["enum"])
        self.assertIn("medium", props["thinking"]["enum"])

        sc = structured(self.generate(server, image_size="4K", aspect_ratio="8:1",
                                      thinking="medium"))
        self.assertEqual((sc["width"], sc["height"]), (12288, 1536))
        self.assertEqual(sc["model"], NANO)
        self.assertEqual(sc["params"], {"model": NANO, "image_size": "4K", "aspect_ratio": "8:1",
                                        "thinking": "medium"})
        request = self.fake.requests()[-1]
        self.assertEqual(request["path"], self.generate_path(NANO))
        self.assertEqual(request["body"]["generationConfig"]["imageConfig"],
                         {"aspectRatio": "8:1", "imageSize": "4K"})
        self.assertEqual(request["body"]["generationConfig"]["thinkingConfig"],
                         {"thinkingLevel": "MEDIUM"})
        # The fake's usage is what a 4K image of this model costs.
        self.assertEqual(sc["usage"]["candidatesTokenCount"], 2520 + 12)
        self.assertGreater(sc["usage"]["thoughtsTokenCount"], 0)

        sc = structured(self.generate(server, aspect_ratio="1:8"))
        self.assertEqual((sc["width"], sc["height"]), (384, 3072))

        # What the row does not have is refused before any request, naming what it has.
        before = len(self.fake.requests())
        text = error_text(self.generate(server, image_size="512"))  # no current model has it
        self.assertIn("'image_size' is \"512\"; allowed: \"1K\", \"2K\", \"4K\"", text)
        text = error_text(self.generate(server, model=DEFAULT, image_size="4K"))
        self.assertIn(f"model {DEFAULT} does not support image_size 4K: it supports 1K only "
                      f"(offered by {NANO} and gemini-3-pro-image)", text)
        text = error_text(self.generate(server, thinking="low"))
        self.assertIn("'thinking' is \"low\"; allowed: \"minimal\", \"medium\", \"high\"", text)
        text = error_text(self.generate(server, model=DEFAULT, thinking="medium"))
        self.assertIn(f"model {DEFAULT} does not take thinking medium: it takes minimal or high "
                      f"(offered by {NANO})", text)
        self.assertEqual(len(self.fake.requests()), before)


class RetiredModels(TableFiles):
    def test_a_retired_model_is_refused_naming_its_date_and_replacement(self):
        server = self.start_imgmcp()
        props = server.request("tools/list")["result"]["tools"][0]["inputSchema"]["properties"]
        self.assertEqual(props["model"]["enum"], [DEFAULT, NANO, "gemini-3-pro-image"])
        text = error_text(self.generate(server, model="gemini-2.5-flash-image"))
        self.assertIn("model gemini-2.5-flash-image was retired on 2026-10-02; use "
                      "gemini-3.1-flash-lite-image instead", text)
        self.assertIn("--allow-retired", text)
        text = error_text(self.generate(server, model="gemini-3.1-flash-image-preview"))
        self.assertIn("model gemini-3.1-flash-image-preview was retired on 2026-06-25; its "
                      "replacement gemini-3.1-flash-image is retired too: use " + NANO, text)
        self.assertEqual(self.fake.requests(), [])

        # As the default it stops start-up, naming the same.
        code, stderr = self.start_failing(["--model", "gemini-3.1-flash-image"])
        self.assertEqual(code, 1, stderr)
        self.assertIn("the default model gemini-3.1-flash-image was retired on 2026-10-29; use "
                      f"{NANO} instead", stderr)

    def test_allow_retired_lets_it_through(self):
        server = self.start_imgmcp(extra_args=["--allow-retired"])
        props = server.request("tools/list")["result"]["tools"][0]["inputSchema"]["properties"]
        self.assertIn("gemini-2.5-flash-image", props["model"]["enum"])
        self.assertIn("gemini-2.5-flash-image: image_size 1K;", props["model"]["description"])
        self.assertIn("retired on 2026-10-02 (use gemini-3.1-flash-lite-image)",
                      props["model"]["description"])
        sc = structured(self.generate(server, model="gemini-3.1-flash-image", image_size="512"))
        self.assertEqual(sc["model"], "gemini-3.1-flash-image")
        self.assertEqual(self.fake.requests()[-1]["path"],
                         self.generate_path("gemini-3.1-flash-image"))


class ModelTableFile(TableFiles):
    def test_an_added_row_works_without_a_rebuild_and_a_known_row_is_corrected(self):
        # A model newer than imgmcp's table (the fake serves it with 3.1 Flash-Lite's rules).
        self.fake.configure(serve_as={"gemini-4-image": DEFAULT})
        path = self.write_table([
            new_model_row("gemini-4-image"),
            {"id": "gemini-3-pro-image", "sizes": ["1K"], "output_image_tokens": {"1K": 1120}},
        ])
        server = self.start_imgmcp(extra_args=["--model-table", path])
        props = server.request("tools/list")["result"]["tools"][0]["inputSchema"]["properties"]
        self.assertEqual(props["model"]["enum"], [DEFAULT, NANO, "gemini-3-pro-image",
                                                  "gemini-4-image"])
        self.assertIn("gemini-4-image: image_size 1K; aspect_ratio 1:1", props["model"]["description"])
        self.assertIn("gemini-3-pro-image: image_size 1K;", props["model"]["description"])
        sc = structured(self.generate(server, model="gemini-4-image", thinking="high",
                                      aspect_ratio="16:9"))
        self.assertEqual((sc["model"], sc["width"], sc["height"]), ("gemini-4-image", 1344, 768))
        request = self.fake.requests()[-1]
        self.assertEqual(request["path"], self.generate_path("gemini-4-image"))
        self.assertEqual(request["body"]["generationConfig"]["thinkingConfig"],
                         {"thinkingLevel": "HIGH"})
        # The file's rows hold: at most 6 images on the new model, 1K only on 3 Pro now.
        before = len(self.fake.requests())
        text = error_text(self.generate(server, model="gemini-4-image", image_size="2K"))
        self.assertIn("model gemini-4-image does not support image_size 2K: it supports 1K only",
                      text)
        text = error_text(self.generate(server, model="gemini-3-pro-image", image_size="2K"))
        self.assertIn("model gemini-3-pro-image does not support image_size 2K", text)
        self.assertEqual(len(self.fake.requests()), before)

    def test_the_file_can_come_from_the_environment_and_name_the_default(self):
        self.fake.configure(serve_as={"gemini-3.1-flash-lite-image-002": DEFAULT})
        path = self.write_table([new_model_row("gemini-3.1-flash-lite-image-002")])
        env = {**self.gemini_env(), "IMGMCP_MODEL_TABLE": path}
        server = self.start_imgmcp(env=env, extra_args=["--model",
                                                        "gemini-3.1-flash-lite-image-002"])
        props = server.request("tools/list")["result"]["tools"][0]["inputSchema"]["properties"]
        self.assertEqual(props["model"]["enum"][0], "gemini-3.1-flash-lite-image-002")
        self.assertIn("up to 6 input images", props["model"]["description"])
        sc = structured(self.generate(server))
        self.assertEqual(sc["model"], "gemini-3.1-flash-lite-image-002")
        self.assertEqual(self.fake.requests()[-1]["path"],
                         self.generate_path("gemini-3.1-flash-lite-image-002"))

    def test_a_malformed_file_stops_start_up_naming_the_file_the_row_and_the_key(self):
        cases = [
            ([{"id": NANO, "colour": "red"}], '(id "gemini-nano-banana-2.1"): key "colour": '
                                              "unknown key"),
            ([{"id": NANO, "sizes": "4K"}], 'key "sizes": must be an array of strings, got a '
                                            "string"),
            ([{"id": NANO, "sizes": ["8K"]}], 'key "sizes": "8K" is not a size'),
            ([{"id": NANO, "retired_on": "yesterday"}], 'key "retired_on": "yesterday" is not '
                                                        "a YYYY-MM-DD date"),
            ([dict(new_model_row("gemini-x"), status="retired", retired_on="2026-11-01",
                   replacement="gemini-y")],
             '(id "gemini-x"): key "replacement": no row has the id "gemini-y"'),
            ([{"id": "gemini-x", "status": "ga"}], '(id "gemini-x"): key "sizes": missing'),
        ]
        for rows, says in cases:
            with self.subTest(says=says):
                path = self.write_table(rows)
                index = len(rows) - 1
                code, stderr = self.start_failing(["--model-table", path])
                self.assertEqual(code, 1, stderr)
                self.assertIn(f"--model-table {path}: models[{index}] ", stderr)
                self.assertIn(says, stderr)
        path = self.write_table('{"models": [')
        code, stderr = self.start_failing(["--model-table", path])
        self.assertEqual(code, 1, stderr)
        self.assertIn(f"--model-table {path}: not valid JSON", stderr)
        # Whatever the backend: the local one checks the file too.
        proc = run_imgmcp("--backend", "local", "--model-table", path, "--self-check")
        self.assertEqual(proc.returncode, 1, proc.stderr)
        self.assertIn(f"--model-table {path}: not valid JSON", proc.stderr)
        code, stderr = self.start_failing(["--model-table", path + ".missing"])
        self.assertIn(f"--model-table {path}.missing: cannot be read", stderr)
        self.assertEqual(self.fake.requests(), [])


class ListModels(TableFiles):
    def test_list_models_prints_the_table_in_effect_and_exits(self):
        proc = run_imgmcp("--list-models")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        out = proc.stdout
        self.assertTrue(out.startswith("imgmcp model table: built in; 8 models, the default "
                                       f"{DEFAULT}; refused unless --allow-retired: "), out)
        self.assertIn(f"\n{NANO}  ga\n  sizes 1K 2K 4K; aspect ratios 1:1 2:3 3:2 3:4 4:3 4:5 5:4 "
                      "9:16 16:9 21:9 1:4 4:1 1:8 8:1\n  thinking minimal medium high; search "
                      "yes;", out)
        self.assertIn("\ngemini-2.5-flash-image  retired on 2026-10-02, replaced by "
                      f"{DEFAULT}\n", out)
        self.assertIn("\n  USD per million tokens: input text 0.25, input image 0.25, output text "
                      "1.5, output image 30, thoughts 1.5; USD per grounded query 0\n", out)
        self.assertEqual(out.count("\n  sizes "), 8)

        path = self.write_table([new_model_row("gemini-4-image")])
        proc = run_imgmcp("--list-models", "--model-table", path)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn(f"built in, with {path} merged over it; 9 models", proc.stdout)
        self.assertIn("\ngemini-4-image  preview\n", proc.stdout)

        bad = self.write_table([{"id": "gemini-4-image"}])
        proc = run_imgmcp("--list-models", "--model-table", bad)
        self.assertEqual(proc.returncode, 1)
        self.assertEqual(proc.stdout, "")
        self.assertIn(f'--model-table {bad}: models[0] (id "gemini-4-image"): key "status": '
                      "missing", proc.stderr)

    def test_help_lists_the_flags(self):
        proc = run_imgmcp("--help")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        for flag in ("--model-table FILE", "--allow-retired", "--list-models",
                     "$IMGMCP_MODEL_TABLE"):
            self.assertIn(flag, proc.stdout)


if __name__ == "__main__":
    unittest.main()
