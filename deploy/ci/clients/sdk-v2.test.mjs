// The official TypeScript SDK v2 client (@modelcontextprotocol/client).
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { defineChecks, defineCoreChecks, httpServer, stdioServer } from './checks.mjs';

async function connect(transport) {
  const client = new Client({ name: 'notebridge-ci-sdk-v2', version: '1' });
  await client.connect(transport);
  return client;
}

defineChecks('sdk v2 stdio', () => connect(new StdioClientTransport(stdioServer())));
defineCoreChecks('sdk v2 stdio --tools core', () => connect(new StdioClientTransport(stdioServer('--tools', 'core'))));
defineChecks('sdk v2 streamable http', () => {
  const { url, headers } = httpServer();
  return connect(new StreamableHTTPClientTransport(url, { requestInit: { headers } }));
});
