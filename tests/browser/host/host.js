// The test host's logic. The test calls window.startHost(...) with the View's HTML (read from
// imgmcp with resources/read) and a real tool call and result; window.hostForward (exposed by the
// test through Playwright) carries the View's server requests to the real imgmcp binary.
import { AppBridge, PostMessageTransport } from '@modelcontextprotocol/ext-apps/app-bridge';

const log = { sizes: [], initialized: 0, errors: [], requests: [] };
window.hostLog = log;

window.startHost = async ({ html, sandboxUrl, tool, toolInput, toolResult, theme, fixedHeight }) => {
  document.body.classList.toggle('dark', theme === 'dark');
  document.getElementById('tool-line').textContent = `${tool.name}(${JSON.stringify(toolInput)})`;
  const iframe = document.createElement('iframe');
  iframe.id = 'sandbox';
  iframe.title = 'imgmcp session viewer';
  // The sandbox proxy needs scripts and its own origin; the View inside it gets far less.
  iframe.setAttribute('sandbox', 'allow-scripts allow-same-origin');
  iframe.src = sandboxUrl;
  if (fixedHeight) iframe.style.height = `${fixedHeight}px`;
  document.getElementById('slot').append(iframe);

  const bridge = new AppBridge(
    null,
    { name: 'imgmcp-test-host', version: '1.0.0' },
    { serverTools: {}, serverResources: {}, logging: {} },
    {
      hostContext: {
        theme,
        platform: 'web',
        displayMode: 'inline',
        availableDisplayModes: ['inline'],
        containerDimensions: fixedHeight ? { height: fixedHeight } : { maxHeight: 1400 },
        locale: 'en-GB',
        timeZone: 'UTC',
        toolInfo: { tool },
        styles: { variables: { '--font-sans': 'system-ui, "DejaVu Sans", sans-serif' } },
      },
    },
  );
  bridge.oncalltool = async (params) => {
    log.requests.push({ method: 'tools/call', params });
    return window.hostForward('tools/call', params);
  };
  bridge.onreadresource = async (params) => {
    log.requests.push({ method: 'resources/read', params });
    return window.hostForward('resources/read', params);
  };
  bridge.addEventListener('sizechange', ({ width, height }) => {
    log.sizes.push({ width, height });
    if (height && !fixedHeight) iframe.style.height = `${height}px`;  // a fixed container stays
  });
  bridge.addEventListener('sandboxready', () => {
    bridge.sendSandboxResourceReady({ html }).catch((e) => log.errors.push(String(e)));
  });
  bridge.addEventListener('initialized', async () => {
    log.initialized++;
    try {
      await bridge.sendToolInput({ arguments: toolInput });
      if (toolResult) await bridge.sendToolResult(toolResult);
    } catch (e) {
      log.errors.push(String(e));
    }
  });
  window.bridge = bridge;
  await bridge.connect(new PostMessageTransport(iframe.contentWindow, iframe.contentWindow));
};
