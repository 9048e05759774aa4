// The official TypeScript SDK v1 (@modelcontextprotocol/sdk) as an agent's
// client: it validates structuredContent against the outputSchema, errors
// included.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { defineChecks, defineCoreChecks, httpServer, stdioServer } from './checks.mjs';

async function connect(transport) {
  const client = new Client({ name: 'notebridge-ci-sdk-v1', version: '1' });
  await client.connect(transport);
  return client;
}

defineChecks('sdk v1 stdio', () => connect(new StdioClientTransport(stdioServer())));
defineCoreChecks('sdk v1 stdio --tools core', () => connect(new StdioClientTransport(stdioServer('--tools', 'core'))));
defineChecks('sdk v1 streamable http', () => {
  const { url, headers } = httpServer();
  return connect(new StreamableHTTPClientTransport(url, { requestInit: { headers } }));
});
