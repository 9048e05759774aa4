// The owner's console in a real browser (deploy/ci/console-chromium.sh):
// the official TypeScript MCP SDK's OAuth client connects (its grant
// shares the notebooks Alpha and Beta), searches and edits a note; then
// Debian's headless Chromium, driven over the DevTools protocol through
// Caddy over HTTPS, signs in to /owner/ (a wrong passphrase refused
// first), finds the grant with its notebooks, finds its search and
// edit_note in the activity feed (when the activity log is on), narrows
// its notebooks to Alpha (the client's next search loses Beta's note),
// undoes its edit (the note in Joplin is as before) and revokes it (the
// client's next MCP call gets 401). Each page is saved as a screenshot in
// $CONSOLE_SHOTS. No token or passphrase is printed.
//
// Environment: OAUTH_DOMAIN, OAUTH_HTTPS_PORT, OAUTH_CA, OAUTH_CA_SPKI,
// OAUTH_PASSPHRASE, OAUTH_JOPLIN_URL and JOPLIN_TOKEN (the fake Joplin,
// to read the note back), CONSOLE_SHOTS (a directory), CHROMIUM_PID_FILE.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Agent, buildConnector, fetch as undiciFetch } from 'undici';
import WebSocket from 'ws';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';

const need = (k) => { const v = process.env[k]; if (!v) throw new Error(`${k} is not set`); return v; };
const domain = need('OAUTH_DOMAIN');
const port = Number(need('OAUTH_HTTPS_PORT'));
const origin = `https://${domain}`;
const mcpURL = new URL(`${origin}/mcp`);
const passphrase = need('OAUTH_PASSPHRASE');
const shots = need('CONSOLE_SHOTS');
const clientName = 'notebridge CI console client';
const redirectURL = 'http://127.0.0.1:9/callback'; // never contacted
let n = 0;
const ok = (what) => console.log(`ok ${++n} - ${what}`);

const connect = buildConnector({ ca: readFileSync(need('OAUTH_CA')) });
const dispatcher = new Agent({
  connect: (opts, cb) => connect({ ...opts, hostname: '127.0.0.1', port, servername: domain }, cb),
});
const fetchFn = (url, init = {}) => undiciFetch(new URL(url), { ...init, dispatcher });

// An in-memory OAuthClientProvider.
class Provider {
  get redirectUrl() { return redirectURL; }
  get clientMetadata() {
    return { client_name: clientName, redirect_uris: [redirectURL], grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'], token_endpoint_auth_method: 'none' };
  }
  state() { return 'console-state-0123456789'; }
  clientInformation() { return this.client; }
  saveClientInformation(info) { this.client = info; }
  tokens() { return this.saved; }
  saveTokens(t) { this.saved = t; }
  redirectToAuthorization(url) { this.authorizationURL = url; }
  saveCodeVerifier(v) { this.verifier = v; }
  codeVerifier() { return this.verifier; }
}

const joplin = async (path) => {
  const u = new URL(path, need('OAUTH_JOPLIN_URL'));
  u.searchParams.set('token', need('JOPLIN_TOKEN'));
  const r = await fetch(u);
  assert.equal(r.status, 200, `fake Joplin ${path}: ${r.status}`);
  return r.json();
};

const profile = mkdtempSync(join(tmpdir(), 'console-chromium-'));
let chromium;
try {
  // 1. The SDK's OAuth client: 401, discovery, registration, then the
  // consent form (sharing Alpha and Beta, to read and change), the code,
  // finishAuth.
  const provider = new Provider();
  const first = new StreamableHTTPClientTransport(mcpURL, { authProvider: provider, fetch: fetchFn });
  await assert.rejects(new Client({ name: 'console-ci', version: '1' }).connect(first), UnauthorizedError);
  const authURL = provider.authorizationURL;
  assert.ok(authURL, 'the SDK asked for authorization');
  const page = await fetchFn(authURL.href);
  const html = await page.text();
  assert.equal(page.status, 200, `consent page: ${page.status}`);
  const cookie = page.headers.get('set-cookie').split(';')[0];
  const csrf = html.match(/name="csrf" value="([^"]+)"/)[1];
  const idOf = (title) => html.match(new RegExp(`name="notebook" value="([0-9a-f]{32})"> ${title}\\b`))?.[1];
  const alpha = idOf('Alpha'), beta = idOf('Beta');
  assert.ok(alpha && beta, 'the consent page offers Alpha and Beta');
  const form = new URLSearchParams({ csrf, passphrase, decision: 'approve' });
  for (const id of [alpha, beta]) { form.append('notebook', id); form.append('write_notebook', id); }
  const approved = await fetchFn(authURL.href, { method: 'POST', redirect: 'manual', body: form.toString(),
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie } });
  assert.ok([302, 303].includes(approved.status), `approval: ${approved.status}`);
  const code = new URL(approved.headers.get('location')).searchParams.get('code');
  await first.finishAuth(code);
  const transport = new StreamableHTTPClientTransport(mcpURL, { authProvider: provider, fetch: fetchFn });
  const client = new Client({ name: 'console-ci', version: '1' });
  await client.connect(transport);
  ok('the TypeScript SDK client is authorized for Alpha and Beta');

  const search = async () => {
    const r = await client.callTool({ name: 'search', arguments: { query: 'lemon' } });
    assert.notEqual(r.isError, true, `search: ${JSON.stringify(r.content).slice(0, 300)}`);
    return r.structuredContent.results.map((h) => h.title).sort();
  };
  // Search answers from the index once it is built (before, Joplin's own
  // search answers, which the fake Joplin does by title only): wait for
  // joplin_status to say so.
  for (let i = 0; ; i++) {
    const st = (await client.callTool({ name: 'joplin_status', arguments: {} })).structuredContent;
    if (st?.index?.state === 'ready') break;
    assert.ok(i < 600, `the search index never became ready: ${JSON.stringify(st?.index)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  assert.deepEqual(await search(), ['Alpha note', 'Beta note'], 'the grant sees Alpha and Beta');
  const hit = (await client.callTool({ name: 'search', arguments: { query: 'lemon' } })).structuredContent.results.find((h) => h.title === 'Alpha note');
  const note = (await client.callTool({ name: 'get_note', arguments: { id: hit.id } })).structuredContent;
  const before = note.body;
  const edit = await client.callTool({ name: 'edit_note', arguments: { id: note.id, updated_time: note.updated_time,
    changes: [{ op: 'append', text: '\nadded by the console CI client' }] } });
  assert.notEqual(edit.isError, true, `edit_note: ${JSON.stringify(edit.content)}`);
  const receipt = edit.structuredContent.receipt_id;
  assert.ok(receipt, 'edit_note returns a receipt');
  assert.notEqual((await joplin(`/notes/${note.id}?fields=body`)).body, before, 'the edit reached Joplin');
  ok('the client searched (Alpha and Beta notes) and edited the Alpha note');

  // 2. Chromium.
  chromium = spawn('chromium', ['--headless=new', '--no-sandbox', '--disable-gpu', '--no-first-run',
    '--disable-extensions', '--disable-background-networking', '--disable-dev-shm-usage',
    `--user-data-dir=${profile}`, '--remote-debugging-port=0', '--window-size=420,900',
    `--host-resolver-rules=MAP ${domain}:443 127.0.0.1:${port}`,
    `--ignore-certificate-errors-spki-list=${need('OAUTH_CA_SPKI')}`, 'about:blank'],
  // Its own process group, so that cleanup ends its helper processes too.
  { stdio: ['ignore', 'ignore', 'pipe'], detached: true });
  if (process.env.CHROMIUM_PID_FILE) writeFileSync(process.env.CHROMIUM_PID_FILE, `${chromium.pid}\n`);
  let chromiumErr = '';
  chromium.stderr.on('data', (d) => { chromiumErr += d; });
  const portFile = join(profile, 'DevToolsActivePort');
  for (let i = 0; i < 300 && !existsSync(portFile); i++) await sleep(100);
  assert.ok(existsSync(portFile), `Chromium did not start its DevTools endpoint:\n${chromiumErr.slice(-2000)}`);
  const devtools = readFileSync(portFile, 'utf8').split('\n')[0];
  const targets = await (await fetch(`http://127.0.0.1:${devtools}/json/list`)).json();
  const ws = new WebSocket(targets.find((t) => t.type === 'page').webSocketDebuggerUrl, { perMessageDeflate: false });
  await new Promise((r, j) => { ws.once('open', r); ws.once('error', j); });
  let seq = 0;
  const pending = new Map();
  const listeners = [];
  ws.on('message', (raw) => {
    const m = JSON.parse(raw);
    if (m.id && pending.has(m.id)) {
      const { resolve, reject } = pending.get(m.id);
      pending.delete(m.id);
      m.error ? reject(new Error(m.error.message)) : resolve(m.result);
    } else if (m.method) for (const l of listeners) l(m);
  });
  const cdp = (method, params = {}) => new Promise((resolve, reject) => {
    const id = ++seq;
    pending.set(id, { resolve, reject });
    ws.send(JSON.stringify({ id, method, params }));
  });
  const once = (method) => new Promise((r) => listeners.push((m) => m.method === method && r(m.params)));
  const evaluate = async (expr) => (await cdp('Runtime.evaluate', { expression: expr, returnByValue: true })).result.value;
  await cdp('Page.enable');
  const go = async (url) => { const l = once('Page.loadEventFired'); await cdp('Page.navigate', { url }); await l; };
  // submit runs a form's own submission (as a click would: the browser
  // sends its Origin and cookies) and waits for the next page.
  const submit = async (formExpr) => { const l = once('Page.loadEventFired'); await evaluate(`(${formExpr}).requestSubmit()`); await l; };
  const text = () => evaluate('document.body.innerText');
  mkdirSync(shots, { recursive: true });
  const shot = async (name) => {
    const s = await cdp('Page.captureScreenshot', { format: 'png', captureBeyondViewport: true });
    writeFileSync(join(shots, `console-${name}.png`), Buffer.from(s.data, 'base64'));
  };

  await go(`${origin}/owner/`);
  assert.equal(await evaluate('location.pathname'), '/owner/signin', 'the console sends a stranger to sign in');
  assert.equal(await evaluate('document.scripts.length'), 0, 'no script on the console');
  await shot('signin');
  await evaluate(`document.getElementById('passphrase').value = 'not-the-passphrase'`);
  await submit(`document.querySelector('form[action="/owner/signin"]')`);
  assert.match(await text(), /Wrong passphrase/, 'a wrong passphrase is refused');
  assert.equal(await evaluate('location.pathname'), '/owner/signin');
  await evaluate(`document.getElementById('passphrase').value = ${JSON.stringify(passphrase)}`);
  await submit(`document.querySelector('form[action="/owner/signin"]')`);
  assert.equal(await evaluate('location.pathname'), '/owner/apps', 'signed in');
  ok('sign-in: a wrong passphrase refused, the right one opens the console');

  const app = `document.querySelector('section.app')`;
  const apps = await text();
  assert.ok(apps.includes(clientName) && apps.includes('its own claim'), `the apps page names the client as its claim:\n${apps}`);
  assert.ok(apps.includes('127.0.0.1:9'), 'the apps page names the redirect host');
  const shared = await evaluate(`${app}.querySelector('.notebooks').innerText`);
  assert.match(shared, /Alpha/); assert.match(shared, /Beta/); assert.doesNotMatch(shared, /Gamma/);
  await shot('apps');
  ok('the apps page shows the grant the SDK client just made, with Alpha and Beta');

  await go(`${origin}/owner/activity`);
  const feed = await text();
  await shot('activity');
  if (feed.includes('The activity log is off')) {
    console.log('SKIP - the activity feed: this build has no activity log');
  } else {
    const tools = await evaluate(`[...document.querySelectorAll('tr.entry td.tool')].map((t) => t.innerText)`);
    assert.ok(tools.includes('search') && tools.includes('edit_note'), `the feed lists search and edit_note: ${tools}`);
    assert.ok(feed.includes('Alpha note'), 'the feed names the edited note by its title');
    assert.ok(!feed.includes('added by the console CI client'), 'the feed shows no note text');
    ok('the activity feed lists the client\'s search and edit_note, the note by its title');
  }

  // Narrow to Alpha: no passphrase asked; the client's next search loses Beta's note.
  await go(`${origin}/owner/apps/notebooks?grant=${await (async () => { await go(`${origin}/owner/apps`); return evaluate(`${app}.querySelector('input[name=grant]').value`); })()}`);
  await evaluate(`for (const b of document.querySelectorAll('input[value="${beta}"]')) b.checked = false`);
  await shot('notebooks');
  await submit(`document.querySelector('form[action="/owner/apps/notebooks"]')`);
  assert.match(await text(), /Changed the notebooks/, `narrowing took effect: ${await text()}`);
  assert.deepEqual(await search(), ['Alpha note'], 'after narrowing the client\'s next search finds only Alpha\'s note');
  ok('narrowed to Alpha in the console: the client\'s next search lost Beta\'s note');

  // Undo the edit.
  await go(`${origin}/owner/changes`);
  const change = await text();
  assert.ok(change.includes('added by the console CI client'), 'the change shows its diff');
  await shot('changes');
  await submit(`document.querySelector('#r-${receipt} form')`);
  assert.match(await text(), /Undone/, `the undo: ${await text()}`);
  assert.equal((await joplin(`/notes/${note.id}?fields=body`)).body, before, 'the note in Joplin is as before the edit');
  ok('undo from the console restored the note in Joplin');

  // Revoke: the client's next MCP call gets 401.
  await go(`${origin}/owner/apps`);
  await submit(`document.querySelector('form[action="/owner/apps/revoke"]')`);
  assert.match(await text(), /Revoked/);
  await shot('revoked');
  const after = await fetchFn(mcpURL, { method: 'POST', body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    headers: { authorization: `Bearer ${provider.saved.access_token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' } });
  assert.equal(after.status, 401, `after revoking, /mcp answers 401: ${after.status}`);
  ok('revoked in the console: the client\'s next MCP call gets 401');

  await go(`${origin}/owner/status`);
  assert.match(await text(), /Joplin/);
  await shot('status');
  ok(`status page rendered; screenshots in ${shots}`);
  ws.close();
  await transport.close().catch(() => {});
  console.log(`console-chromium: all ${n} checks passed`);
} finally {
  if (chromium && chromium.exitCode === null) {
    const gone = new Promise((r) => chromium.once('exit', r));
    chromium.kill('SIGTERM');
    await gone;
  }
  // The helpers (zygote, crashpad) may outlive the browser and go on
  // writing the profile: end the whole group before removing it.
  if (chromium) {
    try { process.kill(-chromium.pid, 'SIGKILL'); } catch { /* already gone */ }
  }
  await dispatcher.close();
  // Removing the temporary profile is cleanup, not a check: a failure is
  // reported, not fatal.
  try {
    rmSync(profile, { recursive: true, force: true, maxRetries: 10, retryDelay: 200 });
  } catch (e) {
    console.error(`console-chromium: warning: the browser profile ${profile} was not removed: ${e.code}`);
  }
}
