// Shared by inspector_stdio.test.mjs and inspector_http.test.mjs: running
// @modelcontextprotocol/inspector-cli (`mcp-inspector-cli --cli`) one process per command.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { run as runCommand } from '../../support/imgmcp_process.mjs';

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
  const inspect = (args) => runCommand(process.execPath, [inspectorCli, '--cli', ...args],
    { cwd: getRunDir(), timeoutMs: RUN_TIMEOUT_MS });

  async function run(method, extra = []) {
    const r = await inspect([...serverArgs(), '--method', method, ...extra]);
    assert.equal(r.code, 0, `inspector ${method} exited ${r.code}:\n${r.stderr}`);
    return JSON.parse(r.stdout);
  }

  const callTool = (name, args) => run('tools/call', ['--tool-name', name, '--tool-arg', ...args]);

  return { inspect, run, callTool };
}
