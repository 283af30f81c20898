#!/usr/bin/env python3
"""The fake_gemini binary as a process: readiness line, --port-file, serving, control API (with
its gate: a held call, /_fake/wait and /_fake/release), the Batch API (jobs of inlined requests,
their scheduled states, per-request errors, cancels), and a clean exit on SIGTERM and on stdin
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


def check_batches(base):
    """batchGenerateContent answers each inlined request with its own scripted action and keeps
    the answers in a job whose reads follow the schedule; cancels end jobs that are not final."""
    key = {"x-goog-api-key": "k"}
    create = f"{base}/v1beta/models/{MODEL}:batchGenerateContent"

    def job(*prompts):
        requests = [{"request": {"contents": [{"role": "user", "parts": [{"text": p}]}]},
                     "metadata": {"key": f"k{i}"}} for i, p in enumerate(prompts)]
        return {"batch": {"display_name": "t", "input_config": {"requests": {"requests": requests}}}}

    assert post(create, job("a"))[0] == 403  # no key
    assert post(create, {"batch": {}}, key)[0] == 400
    assert post(f"{base}/_fake/script", [{}, {"status": 429}])[0] == 200
    status, op = post(create, job("solid red", "solid green", "solid blue"), key)
    assert status == 200, op
    name = op["name"]
    assert name.startswith("batches/") and op["metadata"]["state"] == "BATCH_STATE_PENDING", op
    assert not op["done"] and "response" not in op
    states = []
    for _ in range(3):
        status, op = get(f"{base}/v1beta/{name}?key=k")
        assert status == 200, op
        states.append(op["metadata"]["state"])
    assert states == ["BATCH_STATE_RUNNING", "BATCH_STATE_SUCCEEDED", "BATCH_STATE_SUCCEEDED"]
    assert op["done"]
    answers = op["response"]["inlinedResponses"]["inlinedResponses"]
    assert [a["metadata"]["key"] for a in answers] == ["k0", "k1", "k2"], answers
    part = answers[0]["response"]["candidates"][0]["content"]["parts"][-1]
    assert part["inlineData"]["mimeType"] == "image/png"
    assert answers[0]["response"]["usageMetadata"]["candidatesTokenCount"] > 0
    assert answers[1]["error"]["code"] == 8 and answers[1]["error"]["status"], answers[1]
    assert "response" in answers[2]
    with urllib.request.urlopen(f"{base}/_fake/requests", timeout=30) as r:
        log = json.loads(r.read())
    made = [e for e in log if e.get("rpc") == "batchGenerateContent"]
    assert [(e["batch_key"], e["response_status"]) for e in made] == \
        [("k0", 200), ("k1", 429), ("k2", 200)], made
    # A scripted schedule: the job expires; a cancel of a running job ends it cancelled.
    assert post(f"{base}/_fake/config", {"batch_states": ["pending", "expired"]})[0] == 200
    assert post(f"{base}/_fake/config", {"batch_states": ["done"]})[0] == 400
    _, expiring = post(create, job("x"), key)
    _, op = get(f"{base}/v1beta/{expiring['name']}?key=k")
    assert op["metadata"]["state"] == "BATCH_STATE_EXPIRED" and op["done"], op
    assert "response" not in op
    assert post(f"{base}/_fake/config", {"batch_states": ["pending", "running", "succeeded"]})[0] == 200
    _, cancelled = post(create, job("y"), key)
    status, op = post(f"{base}/v1beta/{cancelled['name']}:cancel", {}, key)
    assert status == 200 and op["metadata"]["state"] == "BATCH_STATE_CANCELLED", op
    _, op = get(f"{base}/v1beta/{cancelled['name']}?key=k")
    assert op["metadata"]["state"] == "BATCH_STATE_CANCELLED" and "response" not in op, op
    assert get(f"{base}/v1beta/batches/nope?key=k")[0] == 404
    _, jobs = get(f"{base}/_fake/batches")
    assert [(j["state"], j["requests"]) for j in jobs] == \
        [("succeeded", 3), ("expired", 1), ("cancelled", 1)], jobs
    assert jobs[0]["reads"] == 3 and jobs[2]["cancels"] == 1, jobs


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
            post(f"{base}/_fake/reset", {})
            check_batches(base)
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
