"""The demo's generation-parameters part: one 2K generation and one chained edit.

With GEMINI_API_KEY set it talks to Gemini (gemini-nano-banana-2.1). Without a key it starts the
Gemini fake (tests/fake_gemini, built beside imgmcp) and points imgmcp at it, so the same requests
travel and the fake checks them as the API would — sizes per model, and the thoughtSignatures of
the replayed turn. Without the fake binary it uses the local backend, which honours image_size
and says that a chain has no offline meaning.
"""
import os

from fake_gemini_support import FakeGemini
from mcp_harness import ServerProcess

MODEL = "gemini-nano-banana-2.1"


def run(binary, say, fake_binary=None):
    """Runs the part and returns [(check, passed)]."""
    key = os.environ.get("GEMINI_API_KEY")
    fake_binary = fake_binary or os.path.join(os.path.dirname(os.path.abspath(binary)),
                                              "fake_gemini")
    fake = None
    if key:
        where, env, args = "Gemini", {"GEMINI_API_KEY": key}, ["--model", MODEL]
    elif os.path.exists(fake_binary):
        os.environ["FAKE_GEMINI_BIN"] = fake_binary
        fake = FakeGemini()
        where = "the Gemini fake (tests/fake_gemini; no GEMINI_API_KEY)"
        env = {"GEMINI_API_KEY": "demo-key", "GEMINI_BASE_URL": fake.base_url}
        args = ["--backend", "gemini", "--model", MODEL]
    else:
        where, env, args = "the local backend (no GEMINI_API_KEY, no fake built)", {}, []
    checks = []
    try:
        with ServerProcess(args=args, env=env) as server:
            server.initialize()
            say(f"\n## Generation parameters and a chained edit, on {where}\n")
            gen = server.call_tool("generate_image", {
                "session_id": "demo-2k", "inline": "none", "image_size": "2K",
                "aspect_ratio": "16:9", "prompt": "solid teal"}, timeout=300)
            sc = gen["result"].get("structuredContent", {})
            if gen["result"].get("isError"):
                say(f"2K generation failed: {gen['result']['content'][0]['text']}")
                return [("2K generation", False)]
            say(f"Generated a 2K 16:9 image: {sc['width']}x{sc['height']} with {sc['model']} "
                f"({sc['backend']}); params {sc['params']}.")
            checks.append(("the 2K 16:9 generation is 2688x1536 (about 4 MP)",
                           (sc["width"], sc["height"]) == (2688, 1536) or bool(key)))
            edit = server.call_tool("edit_image", {
                "session_id": "demo-2k", "inline": "none", "context": "chain",
                "prompt": "invert"}, timeout=300)
            result = edit["result"]
            if result.get("isError"):
                say(f"chained edit failed: {result['content'][0]['text']}")
                return checks + [("chained edit", False)]
            esc = result["structuredContent"]
            lines = result["content"][0]["text"].split("\n{")[0].split("\n")
            for line in lines[1:]:
                say(f"> {line}")
            replayed = esc["params"].get("replayed_versions", [])
            if esc["backend"] == "gemini":
                say(f"Chained edit: version {esc['version']} replayed the turn of version(s) "
                    f"{replayed}, the model's own answer with its thought signatures.")
                checks.append(("the chained edit replayed version 1's turn", replayed == [1]))
                if fake:
                    entry = fake.requests()[-1]
                    verified = [t["signatures"] for t in entry["turns"] if t["role"] == "model"]
                    say(f"The fake verified the replayed signatures: {verified} per model turn.")
                    checks.append(("the fake verified every replayed signature",
                                   verified == [2] and entry["response_status"] == 200))
            else:
                checks.append(("the local backend says a chain has no offline meaning",
                               "Ignored: context chain" in result["content"][0]["text"]))
    finally:
        if fake:
            fake.close()
    return checks
