// Shared by inspector_stdio.test.mjs and inspector_http.test.mjs: running
// @modelcontextprotocol/inspector-cli (`mcp-inspector-cli --cli`) one process per command.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export { ok, sha256 } from './common.mjs';

const inspectorCli = fileURLToPath(
  new URL('../node_modules/@modelcontextprotocol/inspector-cli/build/cli.js', import.meta.url));
const RUN_TIMEOUT_MS = 60000;

// Creates a temporary workDir holding package.json, data/ (the server's data dir) and run/ (the
// inspector's working directory); returns { workDir, dataDir, runDir }.
// inspector-cli 1.0.3 looks for "../package.json" relative to the *working directory* (a bug) and
// fails with "Cannot find module" otherwise, so it runs in run/ next to a package.json.
export function makeWorkDir() {
  const workDir = mkdtempSync(join(tmpdir(), 'imgmcp-inspector-'));
  writeFileSync(join(workDir, 'package.json'), '{}\n');
  const dataDir = join(workDir, 'data');
  const runDir = join(workDir, 'run');
  mkdirSync(dataDir);
  mkdirSync(runDir);
  return { workDir, dataDir, runDir };
}

// Returns { inspect, run, callTool } for the server that serverArgs() names (the inspector's
// target arguments), with the inspector running in getRunDir(). Both are read on every run, so
// they may be filled in by a before() hook after this is created.
export function inspectorClient(serverArgs, getRunDir) {
  // Runs mcp-inspector-cli --cli ARGS; resolves {code, stdout, stderr}. The inspector runs in its
  // own process group so a hung run is killed with everything it started.
  function inspect(args) {
    return new Promise((resolve, reject) => {
      const child = spawn(process.execPath, [inspectorCli, '--cli', ...args],
        { cwd: getRunDir(), detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (c) => { stdout += c; });
      child.stderr.on('data', (c) => { stderr += c; });
      const timer = setTimeout(() => {
        try { process.kill(-child.pid, 'SIGKILL'); } catch { /* already gone */ }
        reject(new Error(`inspector timed out: ${args.join(' ')}\n${stderr}`));
      }, RUN_TIMEOUT_MS);
      child.on('error', (err) => { clearTimeout(timer); reject(err); });
      child.on('close', (code) => { clearTimeout(timer); resolve({ code, stdout, stderr }); });
    });
  }

  async function run(method, extra = []) {
    const r = await inspect([...serverArgs(), '--method', method, ...extra]);
    assert.equal(r.code, 0, `inspector ${method} exited ${r.code}:\n${r.stderr}`);
    return JSON.parse(r.stdout);
  }

  const callTool = (name, args) => run('tools/call', ['--tool-name', name, '--tool-arg', ...args]);

  return { inspect, run, callTool };
}
