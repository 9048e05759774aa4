// mcp-remote (the npm package desktop MCP clients use to reach remote
// servers; pinned in package.json) against notebridge's OAuth 2.1 server,
// through Caddy over HTTPS (deploy/ci/mcp-remote.sh). A stdio MCP client
// (the official TypeScript SDK) runs `mcp-remote https://DOMAIN/mcp`,
// which on its own discovers (RFC 9728, RFC 8414), registers (RFC 7591),
// opens the "browser" (BROWSER=consent-browser.sh approves the consent
// form with the owner passphrase), exchanges the code with PKCE and
// proxies tools/list and tools/call. A second run reuses the tokens it
// stored in MCP_REMOTE_CONFIG_DIR without asking the owner again. Every
// step is asserted; no token is printed.
//
// Environment: OAUTH_DOMAIN, MCP_REMOTE_CONFIG_DIR, MCP_REMOTE_BROWSER_LOG,
// MCP_REMOTE_CALLBACK_PORT (a free port for its local OAuth callback) and
// what consent-browser.sh and connect-to.cjs read (set by the script).
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { createRequire } from 'node:module';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

const domain = need('OAUTH_DOMAIN');
// mcp-remote's default callback port derives from the server URL, the same
// in every run on this machine; a second instance waits for the first.
const callbackPort = need('MCP_REMOTE_CALLBACK_PORT');
const configDir = need('MCP_REMOTE_CONFIG_DIR');
const browserLog = need('MCP_REMOTE_BROWSER_LOG');
const proxy = createRequire(import.meta.url).resolve('mcp-remote/dist/proxy.js');

function need(name) {
  return process.env[name] || assert.fail(`${name} is not set`);
}

let n = 0;
const ok = (what) => console.log(`ok ${++n} - ${what}`);

const opened = () => (existsSync(browserLog) ? readFileSync(browserLog, 'utf8').split('\n').filter(Boolean).length : 0);

// Every mcp-remote started here ends with this process, however it ends.
const children = [];
process.on('exit', () => children.forEach((pid) => { try { process.kill(pid); } catch { /* gone */ } }));

// run starts mcp-remote under a stdio MCP client; its stderr is collected.
async function run() {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [proxy, `https://${domain}/mcp`, callbackPort, '--auth-timeout', '60'],
    env: process.env,
    stderr: 'pipe',
  });
  let log = '';
  transport.stderr.on('data', (b) => { log += b; });
  const client = new Client({ name: 'notebridge-ci-mcp-remote', version: '1' });
  try {
    const connected = client.connect(transport, { timeout: 90_000 });
    children.push(transport.pid);
    await connected;
  } catch (err) {
    console.error(log);
    throw err;
  }
  return { client, transport, log: () => log };
}

// 1. First run: discovery, registration, consent in the "browser", token.
let { client, transport, log } = await run();
assert.equal(opened(), 1, 'mcp-remote opened the consent page once');
assert.equal(client.getServerVersion()?.name, 'notebridge', 'connected to notebridge through mcp-remote');
ok('mcp-remote: discovery, dynamic registration, consent approved, code exchanged (PKCE)');

const { tools } = await client.listTools();
assert.ok(tools.some((t) => t.name === 'create_notebook'), 'tools/list names create_notebook');
ok(`tools/list through mcp-remote: ${tools.length} tools`);
const title = `mcp-remote e2e ${Date.now()}`;
const nb = await client.callTool({ name: 'create_notebook', arguments: { title } });
assert.notEqual(nb.isError, true, `create_notebook: ${JSON.stringify(nb.content)}`);
assert.ok(nb.structuredContent?.id, 'the new notebook has an id');
const got = await client.callTool({ name: 'get_notebook', arguments: { id: nb.structuredContent.id } });
assert.notEqual(got.isError, true, `get_notebook: ${JSON.stringify(got.content)}`);
assert.equal(got.structuredContent?.title, title, 'get_notebook returns the notebook just created');
ok('tools/call create_notebook, then get_notebook returns it');
await client.close();

// 2. Where mcp-remote keeps its tokens: only in MCP_REMOTE_CONFIG_DIR, and
// never in its log.
const files = readdirSync(configDir, { recursive: true }).map(String);
const tokenFile = files.find((f) => f.endsWith('_tokens.json'));
assert.ok(tokenFile, `mcp-remote stored tokens in MCP_REMOTE_CONFIG_DIR (${files.join(', ')})`);
const stored = JSON.parse(readFileSync(join(configDir, tokenFile), 'utf8'));
assert.ok(stored.access_token && stored.refresh_token, 'an access and a refresh token are stored');
for (const t of [stored.access_token, stored.refresh_token]) {
  assert.ok(!log().includes(t), 'mcp-remote did not log a token');
}
ok(`tokens kept in the temporary MCP_REMOTE_CONFIG_DIR (${tokenFile}), not logged`);

// 3. Second run: the stored tokens are reused; the owner is not asked.
({ client, transport, log } = await run());
const again = await client.callTool({ name: 'get_notebook', arguments: { id: nb.structuredContent.id } });
assert.notEqual(again.isError, true, `get_notebook on the second run: ${JSON.stringify(again.content)}`);
assert.equal(opened(), 1, 'the second run did not open the consent page');
ok('a second mcp-remote run reuses its stored tokens without asking the owner');
await client.close();
console.log(`1..${n}`);
