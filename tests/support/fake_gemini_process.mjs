// The Gemini fake (tests/fake_gemini) as a child process, for every Node test folder. Node
// built-ins only (see imgmcp_process.mjs). Its Python twin is fake_gemini_process.py beside it.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { START_TIMEOUT_MS, stopChild } from './imgmcp_process.mjs';

export const WAIT_TIMEOUT_MS = 20000;

// The fake from FAKE_GEMINI_BIN (set by ctest).
export function fakeGeminiBin() {
  const bin = process.env.FAKE_GEMINI_BIN;
  assert.ok(bin, 'FAKE_GEMINI_BIN must point at the fake_gemini binary');
  return bin;
}

// Starts `fake_gemini --host 127.0.0.1 --port 0` and resolves, once it prints "fake_gemini
// listening on HOST:PORT", with its base URL and its control API (tests/fake_gemini/
// fake_gemini_server.h):
//   control(path, body?)   GET (no body) or POST /_fake/PATH; asserts 200, returns the JSON
//   script(...actions)     queues actions; each generateContent call takes one. {hold: NAME}
//                          holds that call until release(NAME) — a latch the test opens
//   release(gate), reset(), requests()
//   wait({requests, held, timeoutMs})  resolves once at least `requests` calls are logged and
//                          `held` are held at a gate (the fake answers then: no polling)
//   waitForRequests(count) the request log once it has `count` calls
//   stop()                 EOF on its stdin, SIGKILL if it lingers
export async function startFakeGemini({ bin = fakeGeminiBin() } = {}) {
  const child = spawn(bin, ['--host', '127.0.0.1', '--port', '0'],
    { stdio: ['pipe', 'pipe', 'inherit'] });
  const lines = createInterface({ input: child.stdout });
  let timer;
  const line = await new Promise((resolve, reject) => {
    timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`fake_gemini did not start within ${START_TIMEOUT_MS} ms`));
    }, START_TIMEOUT_MS);
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`fake_gemini exited (${code}) before it was ready`)));
    lines.once('line', resolve);
  }).finally(() => clearTimeout(timer));
  const m = /^fake_gemini listening on (\S+):(\d+)$/.exec(line);
  assert.ok(m, `unexpected readiness line: ${line}`);
  const baseUrl = `http://${m[1]}:${m[2]}`;

  async function control(path, body) {
    const res = await fetch(`${baseUrl}/_fake/${path}`, {
      method: body === undefined ? 'GET' : 'POST',
      headers: { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    assert.equal(res.status, 200, await res.clone().text());
    return res.json();
  }

  async function wait({ requests = 0, held = 0, timeoutMs = WAIT_TIMEOUT_MS } = {}) {
    const query = new URLSearchParams({ requests, held, timeout_ms: timeoutMs });
    const res = await fetch(`${baseUrl}/_fake/wait?${query}`);
    const state = await res.json();
    if (res.status !== 200) {
      throw new Error(`fake_gemini: wanted ${requests} requests and ${held} held within ` +
        `${timeoutMs} ms, has ${JSON.stringify(state)}`);
    }
    return state;
  }

  return {
    baseUrl,
    control,
    script: (...actions) => control('script', actions),
    release: (gate) => control('release', { gate }),
    reset: () => control('reset', {}),
    requests: () => control('requests'),
    wait,
    async waitForRequests(count, timeoutMs = WAIT_TIMEOUT_MS) {
      await wait({ requests: count, timeoutMs });
      return control('requests');
    },
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const gone = new Promise((resolve) => child.once('exit', resolve));
      child.stdin.end();  // EOF on stdin stops the fake
      let t;
      const hung = await Promise.race([gone.then(() => false),
        new Promise((resolve) => { t = setTimeout(() => resolve(true), 5000); })]);
      clearTimeout(t);
      if (hung) await stopChild(child, 'SIGKILL');
    },
  };
}
