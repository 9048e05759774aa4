// The owner's consent page in a real browser (deploy/ci/consent-chromium.sh):
// Debian's headless Chromium, driven over the DevTools protocol, opens the
// authorization URL through Caddy over HTTPS, the page must render (client
// name, scopes, the form, the notebook tree with nothing checked; a
// screenshot is saved), the notebooks Alpha and Beta are checked, the
// passphrase is typed and Approve clicked, and the browser must arrive at
// the client's redirect URI with a code that the token endpoint then
// accepts with the PKCE verifier; `search` over MCP with the access token
// finds exactly the notes of Alpha and Beta (not Gamma's). No token, code
// or passphrase is printed.
//
// Environment: OAUTH_DOMAIN, OAUTH_HTTPS_PORT, OAUTH_CA, OAUTH_CA_SPKI (the
// SPKI hash of Caddy's intermediate, the only certificate whose errors
// Chromium ignores), OAUTH_PASSPHRASE, CONSENT_SCREENSHOT (the PNG path),
// CHROMIUM_PID_FILE (optional: where Chromium's pid goes, for the caller's
// cleanup should this process die).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync, mkdirSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Agent, buildConnector, fetch as undiciFetch } from 'undici';
import WebSocket from 'ws';

const need = (k) => { const v = process.env[k]; if (!v) throw new Error(`${k} is not set`); return v; };
const domain = need('OAUTH_DOMAIN');
const port = Number(need('OAUTH_HTTPS_PORT'));
const origin = `https://${domain}`;
const clientName = 'Chromium CI <client> & co';
let n = 0;
const ok = (what) => console.log(`ok ${++n} - ${what}`);

const connect = buildConnector({ ca: readFileSync(need('OAUTH_CA')) });
const dispatcher = new Agent({
  connect: (opts, cb) => connect({ ...opts, hostname: '127.0.0.1', port, servername: domain }, cb),
});
const post = (path, body, type) => undiciFetch(new URL(path, origin), {
  method: 'POST', headers: { 'content-type': type }, body, dispatcher,
});

// The client's redirect URI: a listener that records where the browser lands.
let landed;
const arrived = new Promise((resolve) => { landed = resolve; });
const callback = createServer((req, res) => {
  res.writeHead(200, { 'content-type': 'text/plain' }).end('back at the client');
  if (req.url.startsWith('/callback')) landed(new URL(req.url, 'http://127.0.0.1'));
});
await new Promise((r) => callback.listen(0, '127.0.0.1', r));
const redirectURI = `http://127.0.0.1:${callback.address().port}/callback`;

const profile = mkdtempSync(join(tmpdir(), 'consent-chromium-'));
let chromium;
try {
  // Register a client and build the authorization request (PKCE S256).
  const reg = await post('/oauth/register', JSON.stringify({
    client_name: clientName, redirect_uris: [redirectURI], token_endpoint_auth_method: 'none',
    grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'],
  }), 'application/json');
  assert.equal(reg.status, 201, `registration: ${reg.status}`);
  const { client_id: clientID } = await reg.json();
  const verifier = randomBytes(32).toString('base64url');
  const authURL = new URL('/oauth/authorize', origin);
  authURL.search = new URLSearchParams({
    response_type: 'code', client_id: clientID, redirect_uri: redirectURI, state: 'chromium-state-42',
    code_challenge: createHash('sha256').update(verifier).digest('base64url'), code_challenge_method: 'S256',
    scope: 'notes:read okf:read', resource: `${origin}/mcp`,
  }).toString();
  ok('client registered; authorization URL built');

  // Headless Chromium. --no-sandbox: CI runs as root. Certificate errors
  // are ignored only for Caddy's internal CA (its intermediate's SPKI).
  chromium = spawn('chromium', ['--headless=new', '--no-sandbox', '--disable-gpu', '--no-first-run',
    '--disable-extensions', '--disable-background-networking', '--disable-dev-shm-usage',
    `--user-data-dir=${profile}`, '--remote-debugging-port=0', '--window-size=900,900',
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
  const pageTarget = targets.find((t) => t.type === 'page');
  assert.ok(pageTarget, 'a page target');

  const ws = new WebSocket(pageTarget.webSocketDebuggerUrl, { perMessageDeflate: false });
  await new Promise((r, j) => { ws.once('open', r); ws.once('error', j); });
  let seq = 0;
  const pending = new Map();
  const listeners = [];
  ws.on('message', (raw) => {
    const m = JSON.parse(raw);
    if (m.id && pending.has(m.id)) {
      const { resolve, reject } = pending.get(m.id);
      pending.delete(m.id);
      m.error ? reject(new Error(`${m.error.message}`)) : resolve(m.result);
    } else if (m.method) {
      for (const l of listeners) l(m);
    }
  });
  const cdp = (method, params = {}) => new Promise((resolve, reject) => {
    const id = ++seq;
    pending.set(id, { resolve, reject });
    ws.send(JSON.stringify({ id, method, params }));
  });
  const once = (method) => new Promise((r) => listeners.push((m) => m.method === method && r(m.params)));
  const evaluate = async (expr) => (await cdp('Runtime.evaluate', { expression: expr, returnByValue: true })).result.value;

  await cdp('Page.enable');
  const loaded = once('Page.loadEventFired');
  const nav = await cdp('Page.navigate', { url: authURL.href });
  assert.equal(nav.errorText, undefined, `navigation: ${nav.errorText}`);
  await loaded;

  // The page renders: title, the client's name as text, scopes, the form.
  const view = await evaluate(`JSON.stringify({
    url: location.href, title: document.title, text: document.body.innerText,
    scripts: document.scripts.length, form: !!document.querySelector('form'),
    site: document.querySelector('h2')?.innerText,
    box: (() => { const b = document.querySelector('button[value=approve]')?.getBoundingClientRect();
                  return b ? { x: b.x + b.width / 2, y: b.y + b.height / 2, w: b.width, h: b.height } : null; })() })`);
  const v = JSON.parse(view);
  assert.ok(v.url.startsWith(`${origin}/oauth/authorize`), `the consent page was served over https: ${v.url}`);
  assert.equal(v.title, 'Allow access to your notes?');
  assert.ok(v.text.includes(clientName), `the page names the client ${JSON.stringify(clientName)}:\n${v.text}`);
  assert.ok(v.text.includes('notes:read') && v.text.includes('okf:read') && !v.text.includes('notes:write'), 'the page lists the scopes asked for');
  assert.ok(v.text.includes(`127.0.0.1:${callback.address().port}`), 'the page names the redirect host');
  assert.equal(v.site, '127.0.0.1', 'the page heads the redirect site (an IP address stands for itself)');
  assert.ok(v.text.includes('calls itself') && v.text.includes('not verified'), 'the client name is shown as its unverified claim');
  assert.equal(v.scripts, 0, 'no script on the page (the client name is escaped)');
  assert.ok(v.form && v.box && v.box.w > 0 && v.box.h > 0, 'the form and a visible Approve button');
  const boxes = JSON.parse(await evaluate(`JSON.stringify({
    labels: [...document.querySelectorAll('#notebooks label')].map((l) => l.innerText.trim()),
    checked: document.querySelectorAll('input[type=checkbox]:checked').length })`));
  for (const want of ['All notebooks', 'Alpha', 'Beta', 'Gamma']) {
    assert.ok(boxes.labels.includes(want), `the notebook tree offers ${want}: ${boxes.labels}`);
  }
  assert.equal(boxes.checked, 0, 'nothing is checked when the page opens');
  const picked = await evaluate(`[...document.querySelectorAll('#notebooks label')]
    .filter((l) => ['Alpha', 'Beta'].includes(l.innerText.trim()))
    .map((l) => { l.querySelector('input').click(); return l.innerText.trim(); }).join(',')`);
  assert.equal(picked, 'Alpha,Beta', 'the notebooks Alpha and Beta checked');
  ok('the page shows the notebook tree with nothing checked; Alpha and Beta checked');
  const shot = await cdp('Page.captureScreenshot', { format: 'png' });
  const shotPath = need('CONSENT_SCREENSHOT');
  mkdirSync(dirname(shotPath), { recursive: true });
  writeFileSync(shotPath, Buffer.from(shot.data, 'base64'));
  ok(`consent page rendered in Chromium (screenshot: ${shotPath})`);

  // Type the passphrase, click Approve.
  await evaluate(`document.getElementById('passphrase').focus()`);
  await cdp('Input.insertText', { text: need('OAUTH_PASSPHRASE') });
  for (const type of ['mousePressed', 'mouseReleased']) {
    await cdp('Input.dispatchMouseEvent', { type, x: v.box.x, y: v.box.y, button: 'left', clickCount: 1 });
  }
  const back = await Promise.race([arrived, sleep(20000).then(() => null)]);
  if (!back) {
    const where = await evaluate(`location.href.split('?')[0] + '\\n' + document.body.innerText`).catch((e) => String(e));
    assert.fail(`the browser did not reach the redirect URI after Approve; it shows:\n${where}`);
  }
  assert.equal(back.searchParams.get('state'), 'chromium-state-42');
  assert.equal(back.searchParams.get('iss'), origin, 'the redirect names its issuer (RFC 9207)');
  const code = back.searchParams.get('code');
  assert.ok(code, 'the redirect carries a code');
  ok('passphrase typed, Approve clicked: the browser landed on the redirect URI with a code and iss');

  // The code is good: the token endpoint exchanges it with the verifier.
  const tok = await post('/oauth/token', new URLSearchParams({
    grant_type: 'authorization_code', code, redirect_uri: redirectURI, client_id: clientID,
    code_verifier: verifier, resource: `${origin}/mcp`,
  }).toString(), 'application/x-www-form-urlencoded');
  assert.equal(tok.status, 200, `token exchange: ${tok.status}`);
  const body = await tok.json();
  assert.ok(body.access_token, 'an access token');
  assert.equal(body.scope.split(' ').sort().join(' '), 'notes:read okf:read'.split(' ').sort().join(' '));
  ok('the code from the browser flow is exchanged for tokens with the approved scopes');

  // search with the grant finds exactly the notes of Alpha and Beta. The
  // index builds in the background; until it is ready Joplin's search
  // answers (narrowed the same way), so poll for the index's answer.
  const mcp = (msg, sid) => undiciFetch(new URL('/mcp', origin), {
    method: 'POST', dispatcher, body: JSON.stringify(msg),
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream',
      authorization: `Bearer ${body.access_token}`, ...(sid ? { 'mcp-session-id': sid, 'mcp-protocol-version': '2025-06-18' } : {}) },
  });
  const decode = async (res) => {
    const text = await res.text();
    const data = text.split('\n').find((l) => l.startsWith('data:'));
    return JSON.parse(data ? data.slice(5) : text);
  };
  const init = await mcp({ jsonrpc: '2.0', id: 1, method: 'initialize',
    params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'consent-chromium', version: '1' } } });
  assert.equal(init.status, 200, `initialize: ${init.status}`);
  const sid = init.headers.get('mcp-session-id');
  await (await mcp({ jsonrpc: '2.0', method: 'notifications/initialized' }, sid)).text();
  let found;
  for (let i = 0; i < 150; i++) {
    const r = await decode(await mcp({ jsonrpc: '2.0', id: 10 + i, method: 'tools/call',
      params: { name: 'search', arguments: { query: 'lemon' } } }, sid));
    assert.ok(r.result && !r.result.isError, `search: ${JSON.stringify(r).slice(0, 300)}`);
    found = r.result.structuredContent;
    if (found.index === 'ready') break;
    await sleep(200);
  }
  assert.equal(found.index, 'ready', 'the search index answered');
  assert.deepEqual(found.results.map((h) => h.title).sort(), ['Alpha note', 'Beta note'],
    `search with the grant finds exactly the shared notebooks' notes: ${found.results.map((h) => h.title)}`);
  ok('search with the grant finds exactly the notes of the two notebooks checked');
  ws.close();
  console.log(`consent-chromium: all ${n} checks passed`);
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
  callback.close();
  await dispatcher.close();
  // Removing the temporary profile is cleanup, not a check: a failure is
  // reported, not fatal.
  try {
    rmSync(profile, { recursive: true, force: true, maxRetries: 10, retryDelay: 200 });
  } catch (e) {
    console.error(`consent-chromium: warning: the browser profile ${profile} was not removed: ${e.code}`);
  }
}
