// Interop: Google ADK JS (@google/adk 2.0.0) MCPToolset drives the real imgmcp binary over stdio.
// No LLM and no network: the ADK tool objects are called directly, as an agent's runner would.
// ADK opens a new MCP client — and so a new imgmcp process — for every call, so the session's
// versions must carry over between processes through the shared --data-dir.
import { imgmcpBin } from '../support/imgmcp_process.mjs';
import { adkToolsetSuite } from './support/adk_suite.mjs';

const bin = imgmcpBin();

adkToolsetSuite({
  name: 'stdio',
  separately: 'separate server processes',
  connect: async (dataDir) => ({
    params: {
      type: 'StdioConnectionParams',
      serverParams: {
        command: bin,
        args: ['--backend', 'local', '--data-dir', dataDir, '--log-level', 'warning'],
        cwd: dataDir,
      },
    },
    stop: async () => {},
  }),
});
