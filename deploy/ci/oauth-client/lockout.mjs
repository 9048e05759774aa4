// Locks one client address out of the consent page (deploy/ci/tunnel-e2e.sh):
// registers a client, opens the consent form and posts wrong passphrases
// until the page answers 429 "Too many wrong passphrases", through the
// public origin. The address is the one the tunnel stand-in claims
// (EDGE_CLIENT_IP there); another address must still get its form, which
// proves the tunnel's X-Forwarded-For reached the bridge's lockout.
//
// Environment: OAUTH_DOMAIN, OAUTH_HTTPS_PORT, OAUTH_CA (as oauth-e2e.mjs).
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Agent, buildConnector, fetch } from 'undici';

const domain = need('OAUTH_DOMAIN');
const port = Number(need('OAUTH_HTTPS_PORT'));
const origin = `https://${domain}`;
const redirectURI = 'http://127.0.0.1:9/callback';

function need(name) {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is not set`);
  return v;
}

const connect = buildConnector({ ca: readFileSync(need('OAUTH_CA')) });
const dispatcher = new Agent({
  connect: (opts, cb) => connect({ ...opts, hostname: '127.0.0.1', port, servername: domain }, cb),
});
let cookie = '';
async function get(url, init = {}) {
  const r = await fetch(url, { ...init, redirect: 'manual', dispatcher, headers: { ...init.headers, cookie } });
  for (const c of r.headers.getSetCookie()) cookie = c.split(';')[0];
  return { status: r.status, body: await r.text() };
}

try {
  const reg = await get(new URL('/oauth/register', origin), {
    method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ client_name: 'notebridge CI (lockout)', redirect_uris: [redirectURI], token_endpoint_auth_method: 'none',
      grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'] }),
  });
  assert.equal(reg.status, 201, `registration: ${reg.status} ${reg.body}`);
  const verifier = randomBytes(32).toString('base64url');
  const auth = new URL('/oauth/authorize', origin);
  auth.search = new URLSearchParams({ response_type: 'code', client_id: JSON.parse(reg.body).client_id, redirect_uri: redirectURI,
    code_challenge: createHash('sha256').update(verifier).digest('base64url'), code_challenge_method: 'S256',
    state: 'ci-lockout-0123456789', resource: `${origin}/mcp` }).toString();
  let tries = 0;
  for (;;) {
    const page = await get(auth);
    if (page.status === 429) {
      assert.match(page.body, /Too many wrong passphrases/, `429 for another reason: ${page.body.slice(0, 200)}`);
      break;
    }
    assert.equal(page.status, 200, `consent page: ${page.status}`);
    const csrf = page.body.match(/name="csrf" value="([^"]+)"/)?.[1];
    assert.ok(csrf, 'the form carries a CSRF token');
    const post = await get(auth, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ csrf, passphrase: `wrong-${tries}`, decision: 'approve' }).toString() });
    tries++;
    assert.ok([401, 429].includes(post.status), `a wrong passphrase: ${post.status}`);
    assert.ok(tries <= 10, 'no lockout after 10 wrong passphrases');
  }
  console.log(`lockout: this address is locked out after ${tries} wrong passphrases`);
} finally {
  await dispatcher.close();
}
