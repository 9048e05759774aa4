// The official TypeScript MCP SDK v1's OAuth client against notebridge's
// OAuth 2.1 server, through Caddy over HTTPS (deploy/ci/oauth-e2e.sh):
// discovery → dynamic registration → authorization (the consent form,
// fetched and submitted with curl and a cookie jar) → token (finishAuth) →
// tools/list, tools/call → refresh → revocation → the next call refused.
// Every step is asserted; no token, code or passphrase is printed.
//
// Environment: OAUTH_DOMAIN, OAUTH_HTTPS_PORT (Caddy's port on 127.0.0.1),
// OAUTH_CA (Caddy's internal root), OAUTH_PASSPHRASE (the owner passphrase).
// OAUTH_E2E_SKIP_REVOKE=1 skips the revocation, to show the last check fails.
// OAUTH_E2E_FIND=WORD also has the connector search for WORD and read the
// note found (deploy/ci/walkthrough.sh: the person's synced note).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, buildConnector, fetch as undiciFetch } from 'undici';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';

const domain = need('OAUTH_DOMAIN');
const port = Number(need('OAUTH_HTTPS_PORT'));
const caFile = need('OAUTH_CA');
const passphrase = need('OAUTH_PASSPHRASE');
const origin = `https://${domain}`;
const mcpURL = new URL(`${origin}/mcp`);
const redirectURL = 'http://127.0.0.1:9/callback'; // never contacted: the code is read from the Location header

function need(name) {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is not set`);
  return v;
}

let n = 0;
function ok(what) {
  n++;
  console.log(`ok ${n} - ${what}`);
}

// Every request goes to Caddy's port on 127.0.0.1 with the public name as
// SNI and Host, verified against Caddy's internal CA only.
const connect = buildConnector({ ca: readFileSync(caFile) });
const dispatcher = new Agent({
  connect: (opts, cb) => {
    assert.equal(opts.hostname, domain, 'the client only talks to the public origin');
    connect({ ...opts, hostname: '127.0.0.1', port: port, servername: domain }, cb);
  },
});
const seen = [];
const fetchFn = async (url, init = {}) => {
  const u = new URL(url);
  const body = typeof init.body === 'string' ? init.body : init.body instanceof URLSearchParams ? init.body.toString() : '';
  seen.push({ method: init.method ?? 'GET', path: u.pathname, grant: new URLSearchParams(body).get('grant_type') });
  const resp = await undiciFetch(u, { ...init, dispatcher });
  const loc = resp.headers.get('location');
  if (loc) pointed.push(new URL(loc, u).href);
  const meta = (resp.headers.get('www-authenticate') ?? '').match(/resource_metadata="([^"]+)"/)?.[1];
  if (meta) pointed.push(meta);
  return resp;
};
// Every URL a response pointed the client to (Location, the challenge's
// resource_metadata).
const pointed = [];

// onOrigin asserts that every URL in value (a metadata document, walked
// whole) is on the public origin.
function onOrigin(value, where) {
  if (typeof value === 'string') {
    if (/^[a-z][a-z0-9+.-]*:\/\//i.test(value)) {
      assert.equal(new URL(value).origin, origin, `${where}: ${value} is not on ${origin}`);
    }
  } else if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) onOrigin(v, `${where}.${k}`);
  }
}

// An in-memory OAuthClientProvider that keeps what the SDK gives it unchanged.
class Provider {
  constructor() {
    this.client = undefined;
    this.saved = undefined;
    this.verifier = undefined;
    this.authorizationURL = undefined;
    this.tokenSaves = 0;
  }
  get redirectUrl() { return redirectURL; }
  get clientMetadata() {
    return {
      client_name: 'notebridge CI (TypeScript SDK)',
      redirect_uris: [redirectURL],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }
  state() { return 'ci-state-0123456789'; }
  clientInformation() { return this.client; }
  saveClientInformation(info) { this.client = info; }
  tokens() { return this.saved; }
  saveTokens(t) { this.saved = t; this.tokenSaves++; }
  redirectToAuthorization(url) { this.authorizationURL = url; }
  saveCodeVerifier(v) { this.verifier = v; }
  codeVerifier() { return this.verifier; }
}

const jarDir = mkdtempSync(join(tmpdir(), 'oauth-e2e-'));
// curl through Caddy with a cookie jar; returns { status, headers, body }.
function curl(args, input) {
  const out = execFileSync('curl', ['-sS', '--cacert', caFile, '--connect-to', `${domain}:443:127.0.0.1:${port}`,
    '-c', join(jarDir, 'jar'), '-b', join(jarDir, 'jar'), '-D', join(jarDir, 'headers'), ...args],
  { input, maxBuffer: 1 << 20 }).toString();
  const raw = readFileSync(join(jarDir, 'headers'), 'utf8').trim().split(/\r?\n/);
  const status = Number(raw[0].split(' ')[1]);
  const headers = {};
  for (const line of raw.slice(1)) {
    const i = line.indexOf(':');
    const k = line.slice(0, i).trim().toLowerCase();
    (headers[k] ??= []).push(line.slice(i + 1).trim());
  }
  return { status, headers, body: out };
}

async function connectClient(provider) {
  const transport = new StreamableHTTPClientTransport(mcpURL, { authProvider: provider, fetch: fetchFn });
  const client = new Client({ name: 'notebridge-ci-oauth', version: '1' });
  await client.connect(transport);
  return { client, transport };
}

try {
  const provider = new Provider();

  // 1. Discovery and registration: the first connect meets 401, discovers
  // the resource and authorization server metadata, registers, and asks
  // the provider to send the owner to the authorization URL.
  const first = new StreamableHTTPClientTransport(mcpURL, { authProvider: provider, fetch: fetchFn });
  await assert.rejects(new Client({ name: 'notebridge-ci-oauth', version: '1' }).connect(first), UnauthorizedError);
  const paths = seen.map((s) => `${s.method} ${s.path}`);
  assert.ok(paths.includes('GET /.well-known/oauth-protected-resource/mcp'), `protected resource metadata fetched: ${paths}`);
  assert.ok(paths.includes('GET /.well-known/oauth-authorization-server'), `authorization server metadata fetched: ${paths}`);
  ok('discovery: 401 from /mcp, then RFC 9728 and RFC 8414 metadata through Caddy');
  for (const path of ['/.well-known/oauth-protected-resource/mcp', '/.well-known/oauth-authorization-server']) {
    const r = await fetchFn(new URL(path, origin));
    assert.equal(r.status, 200, `${path}: ${r.status}`);
    onOrigin(await r.json(), path);
  }
  ok(`every URL in both metadata documents is on ${origin}`);
  assert.ok(paths.includes('POST /oauth/register'), `dynamic registration: ${paths}`);
  assert.ok(provider.client?.client_id, 'registered client_id');
  assert.equal(provider.client.client_secret, undefined, 'a public client gets no secret');
  ok('dynamic client registration (RFC 7591)');
  const authURL = provider.authorizationURL;
  assert.ok(authURL, 'the SDK asked for the owner\'s authorization');
  assert.equal(authURL.origin, origin);
  assert.equal(authURL.pathname, '/oauth/authorize');
  assert.equal(authURL.searchParams.get('code_challenge_method'), 'S256');
  assert.equal(authURL.searchParams.get('resource'), mcpURL.href);
  ok('authorization URL: S256 PKCE and the RFC 8707 resource');

  // 2. The owner's consent page through Caddy, then the form.
  const page = curl([authURL.href]);
  assert.equal(page.status, 200, `consent page: ${page.status}`);
  assert.ok(page.body.includes('notebridge CI (TypeScript SDK)'), 'the page names the client');
  assert.equal(page.headers['content-security-policy']?.length, 1, 'exactly one CSP header');
  assert.equal(page.headers['content-security-policy'][0],
    "default-src 'none'; form-action 'self' http://127.0.0.1:9; frame-ancestors 'none'; base-uri 'none'",
    'Caddy keeps the consent page\'s own CSP');
  assert.deepEqual(page.headers['referrer-policy'], ['same-origin'], 'Caddy keeps the page\'s Referrer-Policy (a browser posts the form with Origin: null under no-referrer)');
  assert.ok(page.headers['strict-transport-security'], 'HSTS from Caddy');
  assert.ok((page.headers['set-cookie'] ?? []).some((c) => c.startsWith('__Host-')), 'CSRF cookie set over https');
  const csrf = page.body.match(/name="csrf" value="([^"]+)"/)?.[1];
  assert.ok(csrf, 'the form carries a CSRF token');
  ok('consent page over HTTPS: names the client, its own CSP and Referrer-Policy kept by Caddy, CSRF cookie and token');
  const wrong = curl(['--data-binary', '@-', authURL.href],
    new URLSearchParams({ csrf, passphrase: 'not-the-passphrase', decision: 'approve' }).toString());
  assert.equal(wrong.status, 401, `a wrong passphrase shows the page again with 401: ${wrong.status}`);
  assert.equal(wrong.headers.location, undefined, 'a wrong passphrase does not redirect');
  const csrf2 = wrong.body.match(/name="csrf" value="([^"]+)"/)?.[1] ?? csrf;
  const approved = curl(['--data-binary', '@-', authURL.href],
    new URLSearchParams({ csrf: csrf2, passphrase, decision: 'approve', all_notebooks: '1' }).toString());
  assert.ok([302, 303].includes(approved.status), `approval redirects: ${approved.status}`);
  const back = new URL(approved.headers.location[0]);
  assert.equal(`${back.origin}${back.pathname}`, redirectURL, 'back to the registered redirect URI');
  assert.equal(back.searchParams.get('state'), 'ci-state-0123456789');
  assert.equal(back.searchParams.get('iss'), origin, 'the response names its issuer (RFC 9207)');
  for (const res of [page, wrong, approved]) {
    for (const action of res.body.matchAll(/action="([^"]*)"/g)) {
      assert.equal(new URL(action[1].replaceAll('&amp;', '&'), authURL).origin, origin, `the consent form posts to ${action[1]}`);
    }
  }
  const code = back.searchParams.get('code');
  assert.ok(code, 'an authorization code');
  ok('consent approved with the owner passphrase (a wrong one refused first); code, state and iss on the redirect');

  // 3. Token: the SDK exchanges the code with its PKCE verifier.
  await first.finishAuth(code);
  assert.ok(provider.saved?.access_token && provider.saved?.refresh_token, 'access and refresh tokens');
  assert.equal(provider.saved.token_type.toLowerCase(), 'bearer');
  assert.ok(seen.some((s) => s.path === '/oauth/token' && s.grant === 'authorization_code'));
  ok('token: finishAuth exchanged the code (authorization_code grant)');

  // 4. MCP with the access token.
  let { client, transport } = await connectClient(provider);
  const { tools } = await client.listTools();
  assert.ok(tools.some((t) => t.name === 'create_notebook'), 'tools/list names create_notebook');
  ok(`tools/list: ${tools.length} tools`);
  const nb = await client.callTool({ name: 'create_notebook', arguments: { title: `oauth e2e ${Date.now()}` } });
  assert.notEqual(nb.isError, true, `create_notebook: ${JSON.stringify(nb.content)}`);
  assert.ok(nb.structuredContent?.id, 'the new notebook has an id');
  ok('tools/call create_notebook with the OAuth access token');
  const find = process.env.OAUTH_E2E_FIND;
  if (find) {
    // The person's note, synced from their other device: search finds it
    // (once the first sync brought it), get_note reads its text.
    let hit;
    for (let i = 0; i < 120 && !hit; i++) {
      const res = await client.callTool({ name: 'search', arguments: { query: find } });
      assert.notEqual(res.isError, true, `search: ${JSON.stringify(res.content)}`);
      hit = res.structuredContent?.results?.[0];
      if (!hit) await new Promise((r) => setTimeout(r, 500));
    }
    assert.ok(hit, `search ${find} found no note within 60 s`);
    const note = await client.callTool({ name: 'get_note', arguments: { id: hit.id } });
    assert.ok(note.structuredContent?.body?.includes(find), `get_note ${hit.id}: ${JSON.stringify(note.content).slice(0, 300)}`);
    ok(`the connector reads the person's synced note: search found "${hit.title}", get_note has its text`);
  }

  // 5. Refresh: the saved access token is made invalid; the next call gets
  // 401 and the SDK refreshes with the refresh token, which rotates.
  const before = { ...provider.saved };
  provider.saved = { ...provider.saved, access_token: 'invalidated-by-the-test' };
  await transport.close();
  ({ client, transport } = await connectClient(provider));
  const again = await client.callTool({ name: 'get_notebook', arguments: { id: nb.structuredContent.id } });
  assert.notEqual(again.isError, true, `get_notebook after refresh: ${JSON.stringify(again.content)}`);
  assert.ok(seen.some((s) => s.path === '/oauth/token' && s.grant === 'refresh_token'), 'a refresh_token grant was sent');
  assert.notEqual(provider.saved.access_token, before.access_token, 'a new access token');
  assert.notEqual(provider.saved.refresh_token, before.refresh_token, 'the refresh token rotated');
  ok('refresh: the SDK refreshed after a 401, both tokens rotated, the call succeeded');
  const oldAccess = await fetchFn(mcpURL, {
    method: 'POST', headers: { authorization: `Bearer ${before.access_token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
  });
  assert.equal(oldAccess.status, 401, `the rotated-out access token is refused: ${oldAccess.status}`);
  ok('the rotated-out access token is refused (401)');

  // 6. Revocation (RFC 7009) of the refresh token ends the grant.
  if (process.env.OAUTH_E2E_SKIP_REVOKE !== '1') {
    const rev = await fetchFn(new URL('/oauth/revoke', origin), {
      method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token: provider.saved.refresh_token, token_type_hint: 'refresh_token', client_id: provider.client.client_id }),
    });
    assert.equal(rev.status, 200, `revocation: ${rev.status}`);
    ok('revocation: POST /oauth/revoke answered 200');
  }
  const after = await fetchFn(mcpURL, {
    method: 'POST', headers: { authorization: `Bearer ${provider.saved.access_token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
  });
  assert.equal(after.status, 401, `after revocation /mcp answers 401, got ${after.status}`);
  assert.match(after.headers.get('www-authenticate') ?? '', /error="invalid_token"/);
  ok('after revocation the access token is refused: 401 invalid_token');
  provider.authorizationURL = undefined;
  await assert.rejects(client.callTool({ name: 'get_notebook', arguments: { id: nb.structuredContent.id } }),
    'the SDK client cannot call any more');
  assert.ok(provider.authorizationURL, 'the revoked refresh token cannot refresh: the SDK asks for authorization again');
  ok('the SDK client is refused and cannot refresh; it asks the owner again');
  await transport.close().catch(() => {});
  assert.ok(pointed.length > 0, 'the 401 challenges named their resource metadata');
  for (const url of pointed) {
    assert.ok(new URL(url).origin === origin || url.startsWith(redirectURL), `a response points off the public origin: ${url}`);
  }
  ok(`every URL a response pointed the client to (${pointed.length}: redirects, resource_metadata) is on ${origin}`);
  console.log(`oauth-e2e: all ${n} checks passed`);
} finally {
  rmSync(jarDir, { recursive: true, force: true });
  await dispatcher.close();
}
