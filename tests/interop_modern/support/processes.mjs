// Shared by the modern-era interop tests: the real imgmcp binary (over stdio or HTTP), the fake
// Gemini server, temporary directories and child processes that are always cleaned up.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

export const MODERN = '2026-07-28';
export const TOOL_NAMES = ['edit_image', 'generate_image', 'get_image', 'reset_session'];

// The imgmcp binary from IMGMCP_BIN (set by ctest).
export function imgmcpBin() {
  const bin = process.env.IMGMCP_BIN;
  assert.ok(bin, 'IMGMCP_BIN must point at the imgmcp binary');
  return bin;
}

// The fake Gemini server from FAKE_GEMINI_BIN (set by ctest).
export function fakeGeminiBin() {
  const bin = process.env.FAKE_GEMINI_BIN;
  assert.ok(bin, 'FAKE_GEMINI_BIN must point at the fake_gemini binary');
  return bin;
}

// A fresh temporary directory and a function that removes it.
export function tempDir(prefix) {
  const dir = mkdtempSync(join(tmpdir(), `imgmcp-modern-${prefix}-`));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

// The environment a server child gets: the test's own, without a real Gemini key or auth token.
export function serverEnv(extra = {}) {
  const env = { ...process.env, ...extra };
  if (!('GEMINI_API_KEY' in extra)) delete env.GEMINI_API_KEY;
  delete env.IMGMCP_AUTH_TOKEN;
  return env;
}

// Waits for a child to exit after `signal` (SIGKILL after 5 s); a no-op when it already exited.
export async function stopChild(child, signal = 'SIGTERM') {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill(signal);
  const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
  await exited;
  clearTimeout(timer);
}

// Starts `imgmcp --http 127.0.0.1:0 ARGS` and resolves { child, url, stop } once its stderr says
// "listening on http://HOST:PORT/mcp" (the OS picks the port).
export function startHttpServer(dataDir, args = [], env = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(imgmcpBin(), ['--http', '127.0.0.1:0', '--data-dir', dataDir, ...args],
      { stdio: ['ignore', 'ignore', 'pipe'], cwd: dataDir, env: serverEnv(env) });
    let stderr = '';
    let done = false;
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`no "listening on" line within 20 s:\n${stderr}`));
    }, 20000);
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
      const m = /listening on (http:\/\/\S+\/mcp)/.exec(stderr);
      if (m && !done) {
        done = true;
        clearTimeout(timer);
        resolve({ child, url: m[1], stop: () => stopChild(child), stderr: () => stderr });
      }
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      if (!done) reject(new Error(`imgmcp --http exited (${code}) before listening:\n${stderr}`));
    });
  });
}

// Starts tests/fake_gemini on an OS-chosen port. Resolves { baseUrl, control, waitForRequests,
// stop }; control(path, body?) drives its /_fake/ API.
export async function startFakeGemini() {
  const child = spawn(fakeGeminiBin(), ['--port', '0', '--host', '127.0.0.1'],
    { stdio: ['pipe', 'pipe', 'inherit'] });
  const lines = createInterface({ input: child.stdout });
  const line = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('fake_gemini did not start within 20 s')), 20000);
    child.once('exit', (code) => { clearTimeout(timer); reject(new Error(`fake_gemini exited (${code})`)); });
    lines.once('line', (l) => { clearTimeout(timer); resolve(l); });
  });
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

  // Bounded polling of the fake's request log.
  async function waitForRequests(count, timeoutMs = 20000) {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const log = await control('requests');
      if (log.length >= count) return log;
      if (Date.now() > deadline) throw new Error(`fake saw ${log.length} requests, want ${count}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  async function stop() {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.stdin.end();  // EOF on stdin stops the fake
    const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
    await exited;
    clearTimeout(timer);
  }

  return { baseUrl, control, waitForRequests, stop };
}

// Runs a command to completion with a hard timeout; resolves { code, stdout, stderr }. The child
// runs in its own process group, so a hung run is killed with everything it started.
export function run(command, args, { cwd, env, timeoutMs = 60000 } = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args,
      { cwd, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c) => { stdout += c; });
    child.stderr.on('data', (c) => { stderr += c; });
    const timer = setTimeout(() => {
      try { process.kill(-child.pid, 'SIGKILL'); } catch { /* already gone */ }
      reject(new Error(`timed out after ${timeoutMs} ms: ${command} ${args.join(' ')}\n${stderr}`));
    }, timeoutMs);
    child.on('error', (err) => { clearTimeout(timer); reject(err); });
    child.on('close', (code) => { clearTimeout(timer); resolve({ code, stdout, stderr }); });
  });
}
