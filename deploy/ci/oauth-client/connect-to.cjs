// Preloaded into mcp-remote (NODE_OPTIONS=--require) by deploy/ci/mcp-remote.sh:
// like curl --connect-to, every TLS connection to OAUTH_DOMAIN:443 goes to
// Caddy's port on 127.0.0.1, with the public name kept as SNI (and in the
// Host header, which the caller sets from the URL). mcp-remote cannot be
// given a dispatcher, and CI must not edit /etc/hosts or bind port 443.
'use strict';
const tls = require('node:tls');

const domain = process.env.OAUTH_DOMAIN;
const port = Number(process.env.OAUTH_HTTPS_PORT);
if (!domain || !port) throw new Error('connect-to.cjs needs OAUTH_DOMAIN and OAUTH_HTTPS_PORT');

const connect = tls.connect;
tls.connect = function redirected(...args) {
  const opts = args[0];
  if (opts && typeof opts === 'object' && opts.host === domain && Number(opts.port || 443) === 443) {
    args[0] = { ...opts, host: '127.0.0.1', port, servername: opts.servername || domain };
  }
  return connect.apply(this, args);
};
