#!/usr/bin/env node
// The `imgmcp` command of the npm package: runs the prebuilt binary of this platform's package
// (@imgmcp/linux-x64 or @imgmcp/linux-arm64, optional dependencies) with the same arguments. stdio is the child's own
// (the MCP stream passes through untouched), and the launcher exits with the binary's exit code,
// or by the signal that ended it.
//
// Signals: imgmcp drains on its first SIGINT or SIGTERM (calls in flight finish) and exits at
// once on a second, so it must get exactly one per event. A Ctrl-C in a terminal, or a client
// that ends its server with kill(-pgid) (as the Python MCP SDK does), signals the launcher's whole
// process group; a client that kills the pid it started signals the launcher alone. So the
// binary runs in a process group (and session) of its own, which no signal meant for the
// launcher reaches, and the launcher forwards each signal it gets, once. When one event reaches
// the launcher twice — npm's `npx` forwards what it receives to its child, which is the launcher
// where /bin/sh execs it, and the terminal signals that child too — the copy arriving within
// REPEAT_WINDOW_MS of the one forwarded is the same event and is not forwarded again.
'use strict';
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const PLATFORM_PACKAGES = { 'linux-x64': '@imgmcp/linux-x64', 'linux-arm64': '@imgmcp/linux-arm64' };
const platform = `${process.platform}-${process.arch}`;
const packageName = PLATFORM_PACKAGES[platform];
if (!packageName) {
  console.error(`imgmcp: no prebuilt binary for ${platform}; build it from source: ` +
                'https://github.com/imgmcp/imgmcp#install');
  process.exit(1);
}
let binary;
try {
  binary = path.join(path.dirname(require.resolve(`${packageName}/package.json`)), 'bin', 'imgmcp');
} catch {
  console.error(`imgmcp: ${packageName} is not installed; npm installs it as an optional ` +
                'dependency (reinstall without --omit=optional / --no-optional)');
  process.exit(1);
}
try {
  fs.accessSync(binary, fs.constants.X_OK);
} catch {
  fs.chmodSync(binary, 0o755);  // a tarball unpacked without its modes
}
// detached: the child calls setsid(), so it leaves the launcher's process group (and its
// terminal: Ctrl-C reaches it only through the launcher). The launcher still waits for it.
const child = spawn(binary, process.argv.slice(2), { stdio: 'inherit', detached: true });
const forwarded = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGQUIT'];
const REPEAT_WINDOW_MS = 500;
const lastForwarded = new Map();  // signal name -> when it was last forwarded (ms, monotonic)
function forward(signal) {
  const now = performance.now();
  if (now - (lastForwarded.get(signal) ?? -Infinity) < REPEAT_WINDOW_MS) return;
  lastForwarded.set(signal, now);
  child.kill(signal);
}
for (const signal of forwarded) process.on(signal, forward);
child.on('error', (error) => {
  console.error(`imgmcp: could not start ${binary}: ${error.message}`);
  process.exit(1);
});
child.on('exit', (code, signal) => {
  if (signal) {
    for (const s of forwarded) process.removeAllListeners(s);
    process.kill(process.pid, signal);
    return;
  }
  process.exit(code);
});
