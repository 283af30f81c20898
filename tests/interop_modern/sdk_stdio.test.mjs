// Interop, modern era over stdio: the v2 MCP SDK client (@modelcontextprotocol/client 2.4.0),
// pinned to 2026-07-28 and in auto, against the real imgmcp binary it starts itself.
import { sdkSuite } from './support/sdk_suite.mjs';
import { stdioTransport } from './support/sdk.mjs';

sdkSuite({
  over: ' over stdio',
  open: async (dataDir) => ({
    transport: () => stdioTransport(dataDir, ['--backend', 'local']),
    stop: async () => {},
  }),
});
