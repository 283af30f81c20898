#!/usr/bin/env python3
"""The imgmcp demo: rapid edits of one session, applied in order, none lost.

Starts the real server over stdio, generates an image, fires 20 edits without waiting between
them, then checks that the history is versions 1..21 in the order sent and that every edit is
visible in the final image. Writes a contact sheet of the whole chain and a short report.
Uses the offline local backend unless GEMINI_API_KEY is set (then pixel checks are skipped:
Gemini's edits are not exact). Then one 2K generation and one chained edit (context "chain"),
on Gemini with a key and on the Gemini fake without one (demo/generation_demo.py).

With --http [HOST:]PORT the server runs over Streamable HTTP instead: the demo prints the
/gallery URL at once (open it to watch the versions land), makes the same calls over HTTP, and
keeps serving when it is done until Ctrl-C (--exit-when-done stops at once).
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "integration"))
sys.path.insert(0, HERE)
import generation_demo  # noqa: E402
import pngio  # noqa: E402
from http_mcp import HttpImgmcp, HttpMcpSession  # noqa: E402
from mcp_harness import ServerProcess  # noqa: E402

COLOURS = ["red", "orange", "yellow", "lime", "green", "teal", "cyan", "blue", "navy", "purple",
           "magenta", "pink", "brown", "maroon", "olive", "white", "black", "gray", "gold", "coral"]
RGB = {"red": (255, 0, 0), "orange": (255, 165, 0), "yellow": (255, 255, 0), "lime": (0, 255, 0),
       "green": (0, 128, 0), "teal": (0, 128, 128), "cyan": (0, 255, 255), "blue": (0, 0, 255),
       "navy": (0, 0, 128), "purple": (128, 0, 128), "magenta": (255, 0, 255),
       "pink": (255, 192, 203), "brown": (165, 42, 42), "maroon": (128, 0, 0),
       "olive": (128, 128, 0), "white": (255, 255, 255), "black": (0, 0, 0),
       "gray": (128, 128, 128), "gold": (255, 215, 0), "coral": (255, 127, 80)}


def square_at(i):
    return 112 + (i % 5) * 176, 192 + (i // 5) * 176  # top-left of a 96 px square, 5 x 4 grid


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--binary", required=True)
    parser.add_argument("--contact-sheet-tool", default=None)
    parser.add_argument("--out", default=os.path.join(HERE, "out"))
    parser.add_argument("--data-dir", default=None, help="default: a fresh temporary directory")
    parser.add_argument("--http", metavar="[HOST:]PORT", default=None,
                        help="serve over Streamable HTTP (port 0: any free port) and show /gallery")
    parser.add_argument("--auth-token", default=os.environ.get("IMGMCP_AUTH_TOKEN"),
                        help="with --http: the bearer token the server requires ($IMGMCP_AUTH_TOKEN)")
    parser.add_argument("--exit-when-done", action="store_true",
                        help="with --http: stop the server when the demo is done")
    args = parser.parse_args()
    os.environ["IMGMCP_BIN"] = os.path.abspath(args.binary)
    sheet_tool = args.contact_sheet_tool or os.path.join(os.path.dirname(args.binary),
                                                         "imgmcp_contact_sheet")
    os.makedirs(args.out, exist_ok=True)
    data_dir = args.data_dir or tempfile.mkdtemp(prefix="imgmcp-demo-")
    gemini = bool(os.environ.get("GEMINI_API_KEY"))
    env = {"GEMINI_API_KEY": os.environ["GEMINI_API_KEY"]} if gemini else {}
    started = time.monotonic()
    lines = []

    def say(text=""):
        print(text, flush=True)
        lines.append(text)

    http_server = None
    if args.http:
        listen = args.http if ":" in args.http else "127.0.0.1:" + args.http
        http_server = HttpImgmcp(args.binary, listen, data_dir, token=args.auth_token,
                                 env={k: v for k, v in os.environ.items() if k != "GEMINI_API_KEY"}
                                 | env)
        print(f"Gallery: {http_server.gallery_url}  (open it to watch the session; "
              f"{'it asks for the token' if args.auth_token else 'no token needed'})", flush=True)
    try:
        return run(args, data_dir, env, gemini, started, lines, say, http_server, sheet_tool)
    finally:
        if http_server:
            http_server.stop()
        if not args.data_dir:
            shutil.rmtree(data_dir, ignore_errors=True)


def run(args, data_dir, env, gemini, started, lines, say, http_server, sheet_tool):
    client = HttpMcpSession(http_server) if http_server else ServerProcess(data_dir=data_dir, env=env)
    with client as server:
        info = server.initialize()
        say(f"# imgmcp demo\n\nServer: {info['serverInfo']['name']} {info['serverInfo']['version']}, "
            f"protocol {info['protocolVersion']}, data dir `{data_dir}`.")
        session = f"demo-{int(time.time())}"
        gen = server.call_tool("generate_image", {
            "session_id": session, "inline": "none",
            "prompt": "a calm gradient from navy to teal with soft circles"}, timeout=120)
        sc = gen["result"]["structuredContent"]
        say(f"\nGenerated version {sc['version']} ({sc['width']}x{sc['height']}, backend "
            f"{sc['backend']}, model {sc['model']}).")

        prompts = []
        for i, colour in enumerate(COLOURS):
            x, y = square_at(i)
            prompts.append(f"draw square {colour} at {x},{y} size 96")
        t0 = time.monotonic()
        ids = []
        for p in prompts:  # all 20 sent at once, no waiting in between
            rid = server.next_id()
            ids.append(rid)
            server.send({"jsonrpc": "2.0", "id": rid, "method": "tools/call",
                         "params": {"name": "edit_image",
                                    "arguments": {"session_id": session, "prompt": p,
                                                  "inline": "none"}}})
        versions = []
        for rid in ids:
            resp = server.wait_for(lambda m, r=rid: m.get("id") == r, timeout=300)
            result = resp.get("result", {})
            if result.get("isError") or "error" in resp:
                say(f"edit failed: {resp}")
                return 1
            versions.append(result["structuredContent"]["version"])
        say(f"Sent 20 edits without waiting; all answered in {time.monotonic() - t0:.2f} s, "
            f"as versions {versions[0]}..{versions[-1]}.")

        final = server.call_tool("get_image", {"session_id": session, "inline": "none",
                                               "history_limit": 100})
        fsc = final["result"]["structuredContent"]
        history = fsc["history"]
        numbers = [h["version"] for h in history]
        checks = []
        checks.append(("history is versions 1..21", numbers == list(range(1, 22))))
        checks.append(("edits recorded in the order sent",
                       [h["prompt"] for h in history[1:]] == prompts))
        if not gemini and sc["backend"] == "local":
            decoded = pngio.decode_png(open(fsc["path"], "rb").read())
            missing = [c for i, c in enumerate(COLOURS)
                       if pngio.pixel(decoded, square_at(i)[0] + 48, square_at(i)[1] + 48) != RGB[c]]
            checks.append(("every one of the 20 squares is in the final image", not missing))
        paths = []
        for h in history:
            v = server.call_tool("get_image", {"session_id": session, "version": h["version"],
                                               "inline": "none", "include_history": False})
            paths.append(v["result"]["structuredContent"]["path"])

    if not http_server:  # one 2K generation and one chained edit (demo/generation_demo.py)
        checks += generation_demo.run(args.binary, say)

    sheet = os.path.join(args.out, "contact_sheet.png")
    tiles = []
    for h, path in zip(history, paths):  # each tile captioned "v<N> <operation>"
        tiles += ["--label", f"v{h['version']} {h['operation']}", path]
    subprocess.run([sheet_tool, sheet, "192", "7", *tiles], check=True)
    shutil.copyfile(paths[-1], os.path.join(args.out, "final" + os.path.splitext(paths[-1])[1]))
    say("\n| version | operation | prompt |\n|---|---|---|")
    for h in history:
        say(f"| {h['version']} | {h['operation']} | {h['prompt']} |")
    say("\nChecks:")
    for name, passed in checks:
        say(f"- [{'x' if passed else ' '}] {name}")
    say(f"\nContact sheet: `{sheet}`. Total time {time.monotonic() - started:.1f} s.")
    with open(os.path.join(args.out, "report.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    if http_server:
        print(f"\nGallery: {http_server.gallery_url} — session {session}, all 21 versions.",
              flush=True)
        if not args.exit_when_done:
            print("Serving until Ctrl-C.", flush=True)
            http_server.wait()
    return 0 if all(p for _, p in checks) else 1


if __name__ == "__main__":
    sys.exit(main())
