// Interop: @modelcontextprotocol/inspector-cli 1.0.3 (`mcp-inspector-cli --cli URL --transport
// http`) calls each imgmcp tool and reads its resources over Streamable HTTP against one
// `imgmcp --http 127.0.0.1:0` (port parsed from its stderr line), one inspector per command.
import { startHttpServer } from '../support/imgmcp_process.mjs';
import { inspectorSuite } from './support/inspector_suite.mjs';

inspectorSuite({
  over: ' over HTTP',
  configTest: 'a --config file naming the server by URL',
  connect: async (dataDir) => {
    const { url, stop } = await startHttpServer({ dataDir, args: ['--backend', 'local'] });
    return {
      serverArgs: [url, '--transport', 'http'],
      configEntry: { type: 'streamable-http', url },
      stop,
    };
  },
});
