#!/usr/bin/env python3
"""The fake_gemini binary as a process: readiness line, --port-file, serving, control API, and a
clean exit on SIGTERM and on stdin EOF. Usage: fake_gemini_bin_test.py /path/to/fake_gemini"""
import json
import os
import signal
import subprocess
import sys
import tempfile
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
