// The real imgmcp binary as a child process, for every Node test folder (interop, interop_modern,
// browser), and the other child-process chores they share (temporary directories, stopping a
// child, a command run to completion). Node built-ins only: each of those folders has its own
// node_modules, and this file is outside all of them. Its Python twin is imgmcp_process.py.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const START_TIMEOUT_MS = 20000;  // spawn → the "listening on" line
export const STOP_TIMEOUT_MS = 10000;   // SIGTERM → exit; longer is a hang, and a failure
// The line imgmcp --http prints on stderr once it accepts connections.
export const LISTENING = /listening on (http:\/\/([^\s/]+):(\d+)\/mcp)/;
// What a test's server never inherits from the environment the tests run in.
const CALLER_SETTINGS = ['GEMINI_API_KEY', 'IMGMCP_AUTH_TOKEN', 'IMGMCP_STORE'];

// The imgmcp binary from IMGMCP_BIN (set by ctest); fails the test file when it is missing.
export function imgmcpBin() {
  const bin = process.env.IMGMCP_BIN;
  assert.ok(bin, 'IMGMCP_BIN must point at the imgmcp binary');
  return bin;
}

// The environment a server child gets: the test's own without a Gemini key, auth token or store of
// the caller's, plus `extra`.
export function serverEnv(extra = {}) {
  const env = { ...process.env };
  for (const name of CALLER_SETTINGS) delete env[name];
  return { ...env, ...extra };
}

// A fresh temporary directory and a function that removes it.
export function tempDir(prefix) {
  const dir = mkdtempSync(join(tmpdir(), `imgmcp-${prefix}-`));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

const exited = (child) => child.exitCode !== null || child.signalCode !== null;

// Sends `signal` to a child and waits for it to exit; a no-op when it already did. A child still
// running `timeoutMs` later is killed (SIGKILL) and the promise rejects: a stop that hangs is a bug.
export async function stopChild(child, signal = 'SIGTERM', timeoutMs = STOP_TIMEOUT_MS) {
  if (!child || exited(child)) return;
  const gone = new Promise((resolve) => child.once('exit', resolve));
  child.kill(signal);
  let timer;
  const hung = await Promise.race([
    gone.then(() => false),
    new Promise((resolve) => { timer = setTimeout(() => resolve(true), timeoutMs); }),
  ]);
  clearTimeout(timer);
  if (hung) {
    child.kill('SIGKILL');
    await gone;
    throw new Error(`pid ${child.pid} did not exit within ${timeoutMs} ms of ${signal}`);
  }
}

// Starts `imgmcp --http 127.0.0.1:0 --data-dir DIR ARGS` (the OS picks the port) and resolves once
// its stderr says "listening on http://HOST:PORT/mcp" with
//   { child, url, host, port, origin, dataDir, stderr(), stop() }.
// Without `dataDir` the server gets a temporary one, removed by stop(). `env` is added to
// serverEnv(). Rejects when the process exits first or says nothing within START_TIMEOUT_MS.
export function startHttpServer({ args = [], env = {}, dataDir, bin = imgmcpBin() } = {}) {
  const own = dataDir === undefined ? tempDir('http') : null;
  const dir = own ? own.dir : dataDir;
  const child = spawn(bin, ['--http', '127.0.0.1:0', '--data-dir', dir, ...args],
    { stdio: ['ignore', 'ignore', 'pipe'], cwd: dir, env: serverEnv(env) });
  let stderr = '';
  let started = false;
  return new Promise((resolve, reject) => {
    const fail = (why) => {
      clearTimeout(timer);
      child.kill('SIGKILL');
      own?.remove();
      reject(new Error(`imgmcp --http ${why}:\n${stderr}`));
    };
    const timer = setTimeout(() => fail(`printed no "listening on" line within ${START_TIMEOUT_MS} ms`),
      START_TIMEOUT_MS);
    child.on('error', (err) => { if (!started) fail(`could not start (${err.message})`); });
    child.on('exit', (code, signal) => { if (!started) fail(`exited (${code ?? signal}) before listening`); });
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
      const m = LISTENING.exec(stderr);
      if (!m || started) return;
      started = true;
      clearTimeout(timer);
      const port = Number(m[3]);
      resolve({
        child,
        url: m[1],
        host: m[2],
        port,
        origin: `http://${m[2]}:${port}`,
        dataDir: dir,
        stderr: () => stderr,
        async stop() {
          try {
            await stopChild(child);
          } finally {
            own?.remove();
          }
        },
      });
    });
  });
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
