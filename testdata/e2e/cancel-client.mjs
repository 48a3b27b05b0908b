// cancel-client.mjs MODE BIN: the official TypeScript SDK client cancels a
// slow call (AbortSignal: it sends notifications/cancelled and forgets the
// id) and then makes another call. MCP says the receiver should not answer a
// cancelled request; an answer that comes anyway reaches the SDK's onerror as
// "Received a response for an unknown message ID". MODE is stdio,
// http (stateless streamable HTTP) or sse (legacy SSE). Exit status 0 when the
// client reported no error and the next call succeeded.
import http from 'node:http';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';

const [mode, bin] = process.argv.slice(2);
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mcpbridge-cancel-'));
const specPath = path.join(dir, 'spec.json');
fs.writeFileSync(specPath, JSON.stringify({
  openapi: '3.0.0', info: { title: 'slow', version: '1' },
  paths: { '/slow': { get: { operationId: 'slow', responses: { 200: { description: 'ok',
    content: { 'application/json': { schema: { type: 'object' } } } } } } } },
}));
const upstream = http.createServer((req, res) => {
  setTimeout(() => { res.setHeader('content-type', 'application/json'); res.end('{"a":1}'); }, 1500);
});
await new Promise((r) => upstream.listen(0, '127.0.0.1', r));
const args = ['serve', '--spec', specPath, '--upstream', `http://127.0.0.1:${upstream.address().port}`, '--all-operations', '--no-cache'];

let bridge, transport;
if (mode === 'stdio') {
  transport = new StdioClientTransport({ command: bin, args, stderr: 'ignore' });
} else {
  bridge = spawn(bin, [...args, '--transport', 'http', '--listen', '127.0.0.1:0', '--no-auth', '--log-format', 'json'], { stdio: ['ignore', 'ignore', 'pipe'] });
  const base = await new Promise((resolve, reject) => {
    let buf = '';
    bridge.stderr.on('data', (d) => {
      buf += d;
      const m = buf.match(/"mcp":"(http:\/\/127\.0\.0\.1:\d+)\/mcp"/);
      if (m) resolve(m[1]);
    });
    bridge.on('exit', (code) => reject(new Error(`bridge exited ${code}: ${buf}`)));
  });
  transport = mode === 'sse' ? new SSEClientTransport(new URL(base + '/sse')) : new StreamableHTTPClientTransport(new URL(base + '/mcp'));
}
const client = new Client({ name: 'e2e-cancel', version: '1' });
const errors = [];
client.onerror = (e) => errors.push(String(e).slice(0, 200));
let failed = false;
try {
  await client.connect(transport);
  const ac = new AbortController();
  const pending = client.callTool({ name: 'slow', arguments: {} }, undefined, { signal: ac.signal })
    .then(() => 'answered', (e) => 'rejected: ' + e.message);
  setTimeout(() => ac.abort('cancelled by the test'), 300);
  console.log('cancelled call:', await pending);
  await new Promise((r) => setTimeout(r, 2000)); // past the upstream's answer
  const next = await client.callTool({ name: 'slow', arguments: {} });
  console.log('next call:', next.isError ? 'isError' : 'ok');
  if (next.isError) failed = true;
} catch (e) {
  console.log('error:', e.message);
  failed = true;
} finally {
  await client.close().catch(() => {});
  bridge?.kill();
  upstream.close();
  fs.rmSync(dir, { recursive: true, force: true });
}
console.log('client errors:', JSON.stringify(errors));
process.exit(failed || errors.length > 0 ? 1 : 0);
