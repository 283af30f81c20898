// Shared by the modern-era interop tests: the modern protocol's names, and (from tests/support,
// shared with every test folder) the real imgmcp binary over HTTP, the Gemini fake, commands run to
// completion, temporary directories and child processes that are always cleaned up.
export {
  imgmcpBin, run, serverEnv, startHttpServer, stopChild, tempDir,
} from '../../support/imgmcp_process.mjs';
export { fakeGeminiBin, startFakeGemini } from '../../support/fake_gemini_process.mjs';

export const MODERN = '2026-07-28';
export const TOOL_NAMES = ['edit_image', 'generate_image', 'get_image', 'reset_session'];
