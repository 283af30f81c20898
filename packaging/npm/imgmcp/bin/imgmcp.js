#!/usr/bin/env node
// The `imgmcp` command of the npm package: runs the prebuilt binary of this platform's package
// (@imgmcp/linux-x64, an optional dependency) with the same arguments. stdio is the child's own
// (the MCP stream passes through untouched), signals are forwarded, and the launcher exits with
// the binary's exit code, or by the signal that ended it.
'use strict';
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const PLATFORM_PACKAGES = { 'linux-x64': '@imgmcp/linux-x64' };
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
const child = spawn(binary, process.argv.slice(2), { stdio: 'inherit' });
const forwarded = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGQUIT'];
for (const signal of forwarded) process.on(signal, () => child.kill(signal));
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
