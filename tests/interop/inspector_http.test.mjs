// Interop: @modelcontextprotocol/inspector-cli 1.0.3 (`mcp-inspector-cli --cli URL --transport
// http`) calls each imgmcp tool and reads its resources over Streamable HTTP against one
// `imgmcp --http 127.0.0.1:0` (port parsed from its stderr line), one inspector per command.
import { imgmcpBin } from './support/common.mjs';
import { startServer, stopServer } from './support/http_server.mjs';
import { inspectorSuite } from './support/inspector_suite.mjs';

const bin = imgmcpBin();

inspectorSuite({
  over: ' over HTTP',
  configTest: 'a --config file naming the server by URL',
  connect: async (dataDir) => {
    const { child, url } = await startServer(bin, dataDir);
    return {
      serverArgs: [url, '--transport', 'http'],
      configEntry: { type: 'streamable-http', url },
      stop: () => stopServer(child),
    };
  },
});
