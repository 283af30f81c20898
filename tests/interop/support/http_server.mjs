// Starts and stops the real imgmcp binary as `imgmcp --http 127.0.0.1:0` for the *_http interop
// tests; the OS picks the port, which is read back from the server's stderr.
import { spawn } from 'node:child_process';

// Starts imgmcp over HTTP and resolves with the child and its /mcp URL from the stderr line
// "imgmcp: listening on http://HOST:PORT/mcp".
export function startServer(bin, dataDir) {
  return new Promise((resolve, reject) => {
    const child = spawn(bin, ['--http', '127.0.0.1:0', '--backend', 'local', '--data-dir', dataDir],
      { stdio: ['ignore', 'ignore', 'pipe'], cwd: dataDir });
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
        resolve({ child, url: m[1] });
      }
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      if (!done) reject(new Error(`imgmcp --http exited (${code}) before listening:\n${stderr}`));
    });
  });
}

// Sends SIGTERM to a server from startServer (if it is still running) and waits for it to exit.
export async function stopServer(server) {
  if (server && server.exitCode === null && server.signalCode === null) {
    const exited = new Promise((resolve) => server.once('exit', resolve));
    server.kill('SIGTERM');
    await exited;
  }
}
