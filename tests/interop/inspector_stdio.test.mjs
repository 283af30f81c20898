// Interop: @modelcontextprotocol/inspector-cli 1.0.3 (`mcp-inspector-cli --cli`) calls each imgmcp
// tool and reads its resources over stdio, one inspector (and one imgmcp process) per command,
// as a user would from a shell. The server gets its settings through -e (environment) or an
// .mcp.json-style --config file.
import { imgmcpBin } from '../support/imgmcp_process.mjs';
import { inspectorSuite } from './support/inspector_suite.mjs';

const bin = imgmcpBin();

inspectorSuite({
  configTest: 'an .mcp.json-style --config file with server flags in args',
  connect: async (dataDir) => ({
    serverArgs: [bin, '-e', `IMGMCP_DATA_DIR=${dataDir}`, '-e', 'IMGMCP_BACKEND=local'],
    configEntry: { type: 'stdio', command: bin, args: ['--backend', 'local', '--data-dir', dataDir] },
    stop: async () => {},
  }),
});
