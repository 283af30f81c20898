// Interop: Google ADK JS (@google/adk 2.0.0) MCPToolset with StreamableHTTPConnectionParams
// against the real binary started as `imgmcp --http 127.0.0.1:0` (port from its stderr line).
// No LLM and no network beyond 127.0.0.1: the ADK tool objects are called directly. ADK opens a
// new MCP session for every call, so state must live in the session store, not the MCP session.
import { startHttpServer } from '../support/imgmcp_process.mjs';
import { adkToolsetSuite } from './support/adk_suite.mjs';

adkToolsetSuite({
  name: 'http',
  separately: 'separate MCP sessions',
  connect: async (dataDir) => {
    const server = await startHttpServer({ dataDir, args: ['--backend', 'local'] });
    return {
      params: { type: 'StreamableHTTPConnectionParams', url: server.url },
      stop: server.stop,
    };
  },
});
