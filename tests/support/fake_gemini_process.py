"""The Gemini fake (tests/fake_gemini) as a child process, for every Python test folder (standard
library only). Its Node twin is fake_gemini_process.mjs beside it.

FakeGemini starts `fake_gemini --host 127.0.0.1 --port 0`, reads its "fake_gemini listening on
HOST:PORT" line and drives its control API (tests/fake_gemini/fake_gemini_server.h): script(),
configure(), reset(), requests(), and the latch — a script action {"hold": NAME} holds that
generateContent call until release(NAME); wait(requests=N, held=M) returns once the fake has logged
N calls and holds M, woken by the fake rather than polled. close() stops it (EOF on its stdin,
SIGKILL if it lingers); tests register it as a cleanup so it goes away on every path.
"""
import json
import os
import queue
import ssl
import subprocess
import threading
import urllib.error
import urllib.parse
import urllib.request

from children import close_pipes, end_at_eof

START_TIMEOUT = 20.0
WAIT_TIMEOUT = 20.0
READY_PREFIX = "fake_gemini listening on "


def fake_binary():
    path = os.environ.get("FAKE_GEMINI_BIN")
    if not path or not os.path.exists(path):
        raise RuntimeError("FAKE_GEMINI_BIN must point at the built fake_gemini binary")
    return path


class FakeGemini:
    def __init__(self, extra_args=(), binary=None, tls=None):
        """tls: (cert_file, key_file, ca_file) to serve HTTPS (the control API trusts ca_file)."""
        self._context = None
        if tls:
            extra_args = [*extra_args, "--tls-cert", tls[0], "--tls-key", tls[1]]
            self._context = ssl.create_default_context(cafile=tls[2])
        self.proc = subprocess.Popen([binary or fake_binary(), "--host", "127.0.0.1", "--port",
                                      "0", *extra_args],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE)
        self.stderr_chunks = []
        lines = queue.Queue()

        def read_stdout():
            for line in self.proc.stdout:
                lines.put(line.decode("utf-8", "replace").strip())
            lines.put(None)

        def read_stderr():
            for chunk in iter(lambda: self.proc.stderr.read1(65536), b""):
                self.stderr_chunks.append(chunk)

        threading.Thread(target=read_stdout, daemon=True).start()
        threading.Thread(target=read_stderr, daemon=True).start()
        try:
            line = lines.get(timeout=START_TIMEOUT)
        except queue.Empty:
            self.close()
            raise RuntimeError("fake_gemini did not report readiness")
        if not line or not line.startswith(READY_PREFIX):
            self.close()
            raise RuntimeError(f"unexpected fake_gemini readiness line: {line!r}\n{self.stderr}")
        self.base_url = ("https://" if tls else "http://") + line[len(READY_PREFIX):]

    # --- control API ----------------------------------------------------------------------
    def _call(self, method, path, body=None, timeout=10, ok=(200,)):
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.base_url + path, data=data, method=method,
                                     headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=timeout, context=self._context) as res:
                return json.loads(res.read())
        except urllib.error.HTTPError as e:
            payload = e.read()
            if e.code in ok:
                return json.loads(payload)
            raise AssertionError(f"fake_gemini {path}: {e.code} {payload!r}")

    def script(self, *actions):
        """Queues actions (tests/fake_gemini/script.h); each generateContent call takes one."""
        return self._call("POST", "/_fake/script", list(actions))

    def configure(self, **config):
        return self._call("POST", "/_fake/config", config)

    def reset(self):
        """Clears the script and the log, closes every gate (letting held calls go)."""
        return self._call("POST", "/_fake/reset", {})

    def requests(self):
        return self._call("GET", "/_fake/requests")

    def batches(self):
        """Every batch job: name, model, state, requests, reads, cancels."""
        return self._call("GET", "/_fake/batches")

    # --- Google OAuth side (tests/fake_gemini/fake_oauth.h) --------------------------------
    def configure_oauth(self, **settings):
        """public_key_file, client_email, client_id, client_secret, refresh_token,
        token_lifetime_s, metadata."""
        return self._call("POST", "/_fake/oauth", settings)

    def expire_tokens(self):
        """Every token issued so far gets 401 from now on."""
        return self._call("POST", "/_fake/expire_tokens", {})

    def token_requests(self):
        return self._call("GET", "/_fake/token_requests")

    def release(self, gate):
        """Opens `gate`: the calls held at it go on, and later ones pass."""
        return self._call("POST", "/_fake/release", {"gate": gate})

    def wait(self, requests=0, held=0, timeout=WAIT_TIMEOUT):
        """Returns {"requests": R, "held": H} once at least `requests` calls are logged and at
        least `held` are held at a gate; raises TimeoutError after `timeout` seconds."""
        query = urllib.parse.urlencode({"requests": requests, "held": held,
                                        "timeout_ms": int(timeout * 1000)})
        state = self._call("GET", f"/_fake/wait?{query}", timeout=timeout + 10, ok=(200, 408))
        if state["requests"] < requests or state["held"] < held:
            raise TimeoutError(f"fake_gemini: wanted {requests} requests and {held} held within "
                               f"{timeout} s, has {state}")
        return state

    def wait_for_requests(self, count, timeout=WAIT_TIMEOUT):
        """The request log once it has at least `count` generateContent calls."""
        self.wait(requests=count, timeout=timeout)
        return self.requests()

    @property
    def stderr(self):
        return b"".join(self.stderr_chunks).decode("utf-8", "replace")

    def close(self):
        end_at_eof(self.proc)  # EOF on stdin stops the fake
        close_pipes(self.proc)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False
