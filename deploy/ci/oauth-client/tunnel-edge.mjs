// A stand-in for a tunnel's public end (deploy/ci/tunnel-e2e.sh): it holds
// the public name's certificate, as Cloudflare's edge or Tailscale's Funnel
// does, and forwards each request over plain HTTP to Caddy's tunnel site
// with the headers that tunnel sends (EDGE_MODE):
//   cloudflared  Host kept (the public name); X-Forwarded-For gets the
//                client's address appended, X-Forwarded-Proto https,
//                CF-Connecting-IP and CF-Visitor; no X-Forwarded-Host.
//   tailscale    Host is the upstream's (the stricter case); X-Forwarded-Host
//                the public name, X-Forwarded-Proto https, X-Forwarded-For
//                replaced by the client's address.
// The client's address is EDGE_CLIENT_IP (the edge sees the real one; here
// every client is on loopback). Responses, SSE included, stream back as
// they come. Prints "listening <port>" when ready; every forwarded request
// is logged to stderr as "<method> <path> host=<public host>".
//
// Environment: EDGE_MODE, EDGE_CERT, EDGE_KEY, EDGE_UPSTREAM (host:port),
// EDGE_CLIENT_IP.
import { readFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';

const mode = need('EDGE_MODE');
const [upHost, upPort] = need('EDGE_UPSTREAM').split(':');
const clientIP = need('EDGE_CLIENT_IP');
if (mode !== 'cloudflared' && mode !== 'tailscale') throw new Error(`EDGE_MODE ${mode}: cloudflared or tailscale`);

function need(name) {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is not set`);
  return v;
}

const hopByHop = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'upgrade', 'te', 'trailer']);

function forwardedHeaders(req) {
  const h = {};
  for (const [k, v] of Object.entries(req.headers)) {
    if (!hopByHop.has(k)) h[k] = v;
  }
  const publicHost = req.headers.host;
  if (mode === 'cloudflared') {
    h['x-forwarded-for'] = h['x-forwarded-for'] ? `${h['x-forwarded-for']}, ${clientIP}` : clientIP;
    h['x-forwarded-proto'] = 'https';
    h['cf-connecting-ip'] = clientIP;
    h['cf-visitor'] = '{"scheme":"https"}';
  } else {
    h.host = `${upHost}:${upPort}`;
    h['x-forwarded-host'] = publicHost;
    h['x-forwarded-proto'] = 'https';
    h['x-forwarded-for'] = clientIP;
  }
  return h;
}

const server = https.createServer({ cert: readFileSync(need('EDGE_CERT')), key: readFileSync(need('EDGE_KEY')) }, (req, res) => {
  console.error(`${req.method} ${req.url} host=${req.headers.host}`);
  const up = http.request({ host: upHost, port: Number(upPort), method: req.method, path: req.url, headers: forwardedHeaders(req) }, (r) => {
    const h = {};
    for (const [k, v] of Object.entries(r.headers)) {
      if (!hopByHop.has(k)) h[k] = v;
    }
    res.writeHead(r.statusCode, h);
    res.flushHeaders();
    r.pipe(res);
  });
  up.on('error', (err) => {
    res.writeHead(502, { 'content-type': 'text/plain' });
    res.end(`tunnel-edge: upstream: ${err.message}`);
  });
  req.pipe(up);
});
server.listen(0, '127.0.0.1', () => console.log(`listening ${server.address().port}`));
for (const sig of ['SIGTERM', 'SIGINT']) process.on(sig, () => process.exit(0));
