-- P6 load client for wrk: each wrk thread opens one MCP session over Streamable HTTP (initialize,
-- then notifications/initialized) and its connections call one small tool in a loop. wrk is a C
-- event loop, so the client is far from being the bottleneck of either server.
--   wrk -t16 -c16 -d10s -s http_load.lua URL -- TOOL ARGS_JSON   (one connection and session per thread, like 16 clients)
--   wrk … -- TOOL ARGS_JSON modern   (MCP 2026-07-28: no handshake, no session; every call is a
--                                      stateless request carrying its own _meta and headers)
-- Prints one JSON line like http_load.mjs:
--   {"rps":…, "p50":ms, "p95":ms, "calls":n, "errors":n, "first_error":…, "client":"wrk"}

local PROTOCOL = "2025-06-18"
local threads = {}

function setup(thread)
  table.insert(threads, thread)
end

local MODERN_PROTOCOL = "2026-07-28"
-- An Authorization header every request carries (an OAuth-protected server), from the
-- environment so no token shows in a process list.
local authorization = os.getenv("IMGMCP_BENCH_AUTHORIZATION")
local tool, args_json
local modern = false
local session_param = nil    -- the arguments' session_id (modern calls send it as a header)
local session = nil          -- this thread's MCP session id, from the first initialize answer
local initialized_sent = false
local next_id = 2
calls = 0                    -- read by done() through thread:get
errors = 0
handshakes = 0
first_error = ""

function init(argv)
  tool = argv[1]
  args_json = argv[2] or "{}"
  modern = argv[3] == "modern"
  -- The tool's session_id, mirrored into Mcp-Param-Session-Id as 2026-07-28 requires.
  session_param = string.match(args_json, '"session_id"%s*:%s*"([^"]*)"')
end

-- A stateless 2026-07-28 tools/call: the headers repeat what the body says.
local function modern_call()
  next_id = next_id + 1
  local h = {
    ["Content-Type"] = "application/json",
    ["Accept"] = "application/json, text/event-stream",
    ["MCP-Protocol-Version"] = MODERN_PROTOCOL,
    ["Mcp-Method"] = "tools/call",
    ["Mcp-Name"] = tool,
  }
  if session_param then h["Mcp-Param-Session-Id"] = session_param end
  if authorization then h["Authorization"] = authorization end
  return wrk.format("POST", nil, h,
    '{"jsonrpc":"2.0","id":' .. next_id .. ',"method":"tools/call","params":{"name":"' .. tool ..
    '","arguments":' .. args_json .. ',"_meta":{"io.modelcontextprotocol/protocolVersion":"' ..
    MODERN_PROTOCOL .. '","io.modelcontextprotocol/clientInfo":{"name":"imgmcp-bench-wrk",' ..
    '"version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}}}')
end

local function headers(with_session)
  local h = {
    ["Content-Type"] = "application/json",
    ["Accept"] = "application/json, text/event-stream",
    ["MCP-Protocol-Version"] = PROTOCOL,
  }
  if with_session then h["Mcp-Session-Id"] = session end
  if authorization then h["Authorization"] = authorization end
  return h
end

function request()
  if modern then return modern_call() end
  if session == nil then
    handshakes = handshakes + 1
    return wrk.format("POST", nil, headers(false),
      '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"' .. PROTOCOL ..
      '","capabilities":{},"clientInfo":{"name":"imgmcp-bench-wrk","version":"1"}}}')
  end
  if not initialized_sent then
    initialized_sent = true
    handshakes = handshakes + 1
    return wrk.format("POST", nil, headers(true),
      '{"jsonrpc":"2.0","method":"notifications/initialized"}')
  end
  next_id = next_id + 1
  return wrk.format("POST", nil, headers(true),
    '{"jsonrpc":"2.0","id":' .. next_id .. ',"method":"tools/call","params":{"name":"' .. tool ..
    '","arguments":' .. args_json .. '}}')
end

local function fail(why)
  errors = errors + 1
  if first_error == "" then first_error = why end
end

function response(status, hdrs, body)
  if not modern and session == nil then
    session = hdrs["Mcp-Session-Id"] or hdrs["mcp-session-id"]
    if session == nil then fail("initialize answered without Mcp-Session-Id (HTTP " .. status .. ")") end
    return
  end
  if status == 202 then return end  -- the initialized notification
  -- Every legacy connection's first request was an initialize (none had a session yet); those
  -- answers are not calls. (Modern results carry serverInfo in _meta: every one is a call.)
  if not modern and string.find(body, '"serverInfo"', 1, true) then return end
  if status ~= 200 then
    fail("HTTP " .. status .. ": " .. string.sub(body, 1, 160))
  elseif string.find(body, '"isError":true', 1, true) or string.find(body, '"error":{', 1, true) then
    fail(string.sub(body, 1, 160))
  elseif string.find(body, '"result"', 1, true) then
    calls = calls + 1
  end
end

function done(summary, latency, requests)
  local total_calls, total_errors, first = 0, 0, ""
  for _, t in ipairs(threads) do
    total_calls = total_calls + t:get("calls")
    total_errors = total_errors + t:get("errors")
    if first == "" then first = t:get("first_error") end
  end
  local e = summary.errors
  total_errors = total_errors + e.connect + e.read + e.write + e.timeout
  local seconds = summary.duration / 1e6
  local quoted = first == "" and "null" or ('"' .. string.gsub(first, '[%c"\\]', " ") .. '"')
  io.write(string.format(
    '{"rps":%.1f,"p50":%.3f,"p95":%.3f,"calls":%d,"errors":%d,"first_error":%s,"client":"wrk"}\n',
    total_calls / seconds, latency:percentile(50) / 1000, latency:percentile(95) / 1000,
    total_calls, total_errors, quoted))
end
