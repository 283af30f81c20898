#!/usr/bin/env python3
"""The fake_gemini binary as a process: readiness line, --port-file, serving, control API (with
its gate: a held call, /_fake/wait and /_fake/release), and a clean exit on SIGTERM and on stdin
EOF. Usage: fake_gemini_bin_test.py /path/to/fake_gemini"""
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import urllib.error
import urllib.request

BIN = sys.argv[1]
MODEL = "gemini-3.1-flash-lite-image"


def post(url, body, headers=None):
    req = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST",
                                 headers={"Content-Type": "application/json", **(headers or {})})
    try:
        with urllib.request.urlopen(req, timeout=30) as res:
            return res.status, json.loads(res.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


def get(url):
    try:
        with urllib.request.urlopen(url, timeout=30) as res:
            return res.status, json.loads(res.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


def check_gate(base, url, body):
    """A call scripted to hold waits until its gate is released; /_fake/wait sees it held."""
    key = {"x-goog-api-key": "k"}
    assert post(f"{base}/_fake/script", [{"hold": ""}])[0] == 400
    assert post(f"{base}/_fake/release", {"gate": 1})[0] == 400
    status, _ = post(f"{base}/_fake/script", [{"hold": "g"}])
    assert status == 200
    answers = []
    caller = threading.Thread(target=lambda: answers.append(post(url, body, key)))
    caller.start()
    status, state = get(f"{base}/_fake/wait?requests=1&held=1&timeout_ms=20000")
    assert (status, state) == (200, {"requests": 1, "held": 1}), (status, state)
    assert answers == [], "a held call was answered"
    status, state = get(f"{base}/_fake/wait?held=2&timeout_ms=1")  # not reached: 408 at once
    assert (status, state) == (408, {"requests": 1, "held": 1}), (status, state)
    assert get(f"{base}/_fake/wait?held=x")[0] == 400
    assert post(f"{base}/_fake/release", {"gate": "g"}) == (200, {"ok": True})
    caller.join(timeout=30)
    assert [a[0] for a in answers] == [200], answers
    assert get(f"{base}/_fake/wait?timeout_ms=1") == (200, {"requests": 1, "held": 0})
    # An open gate lets later calls through; a reset closes it again.
    assert post(f"{base}/_fake/script", [{"hold": "g"}])[0] == 200
    assert post(url, body, key)[0] == 200
    assert post(f"{base}/_fake/reset", {})[0] == 200
    with urllib.request.urlopen(f"{base}/_fake/requests", timeout=30) as r:
        assert json.loads(r.read()) == []
    # A reset also lets go of a call held at a gate that is still closed.
    assert post(f"{base}/_fake/script", [{"hold": "g"}])[0] == 200
    answers.clear()
    caller = threading.Thread(target=lambda: answers.append(post(url, body, key)))
    caller.start()
    assert get(f"{base}/_fake/wait?requests=1&held=1")[0] == 200
    assert post(f"{base}/_fake/reset", {})[0] == 200
    caller.join(timeout=30)
    assert [a[0] for a in answers] == [200], answers


def start(tmp):
    port_file = os.path.join(tmp, "port")
    proc = subprocess.Popen([BIN, "--port", "0", "--port-file", port_file, "--latency-ms", "1"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    line = proc.stdout.readline().strip()
    assert line.startswith("fake_gemini listening on 127.0.0.1:"), line
    port = int(line.rsplit(":", 1)[1])
    with open(port_file) as f:
        assert int(f.read()) == port
    return proc, f"http://127.0.0.1:{port}"


def main():
    with tempfile.TemporaryDirectory() as tmp:
        proc, base = start(tmp)
        try:
            url = f"{base}/v1beta/models/{MODEL}:generateContent"
            body = {"contents": [{"role": "user", "parts": [{"text": "solid red"}]}]}
            status, _ = post(url, body)
            assert status == 403, status
            status, _ = post(f"{base}/_fake/script", [{"status": 503}])
            assert status == 200
            status, err = post(url, body, {"x-goog-api-key": "k"})
            assert status == 503 and err["error"]["status"] == "UNAVAILABLE", err
            status, res = post(url, body, {"x-goog-api-key": "k"})
            assert status == 200, res
            part = res["candidates"][0]["content"]["parts"][-1]
            assert part["inlineData"]["mimeType"] == "image/png"
            with urllib.request.urlopen(f"{base}/_fake/requests", timeout=30) as r:
                log = json.loads(r.read())
            assert [e["response_status"] for e in log] == [403, 503, 200], log
            post(f"{base}/_fake/reset", {})
            check_gate(base, url, body)
            proc.send_signal(signal.SIGTERM)
            assert proc.wait(timeout=20) == 0
        finally:
            if proc.poll() is None:
                proc.kill()
        proc, base = start(tmp)
        try:
            proc.stdin.close()  # EOF on stdin stops it too
            assert proc.wait(timeout=20) == 0
        finally:
            if proc.poll() is None:
                proc.kill()
    print("fake_gemini binary: ok")


if __name__ == "__main__":
    main()
