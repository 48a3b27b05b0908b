#!/usr/bin/env node
// End-to-end check of mcpbridge's demo with the official MCP TypeScript SDK
// client (@modelcontextprotocol/sdk), over one transport:
//
//   node client.mjs stdio BINARY [ARG...]   spawn the bridge, e.g. BINARY demo
//   node client.mjs http URL                streamable HTTP, e.g. http://127.0.0.1:PORT/mcp
//   node client.mjs sse URL                 legacy HTTP+SSE, e.g. http://127.0.0.1:PORT/sse
//
// It lists the tools and calls some of the demo's: listNotes must return the
// seeded notes, getAccount must come back redacted ("[REDACTED]" present, the
// demo's raw API key and token absent), getNote with a bad argument must be a
// tool error (isError), and an unknown tool must be a protocol error. Any
// mismatch exits 1 with the reason on stderr; success prints one line on
// stdout. Everything is bounded by a 30 s deadline.

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';

// The demo API's secrets (cmd/mcpbridge/demo/demo.go): none may reach the client.
const DEMO_SECRETS = ['demo-key-7f3a9c1e5b', 'c2lnbmF0dXJlLW5vdC1yZWFs', 'eyJzdWIiOiJkZW1vIn0'];
const MASK = '[REDACTED]';
const DEADLINE_MS = 30_000;

function usage() {
  console.error('usage: node client.mjs stdio BINARY [ARG...] | http URL | sse URL');
  process.exit(2);
}

function transportFor(kind, rest) {
  switch (kind) {
    case 'stdio':
      if (rest.length < 1) usage();
      return new StdioClientTransport({ command: rest[0], args: rest.slice(1), stderr: 'pipe' });
    case 'http':
      if (rest.length !== 1) usage();
      return new StreamableHTTPClientTransport(new URL(rest[0]));
    case 'sse':
      if (rest.length !== 1) usage();
      return new SSEClientTransport(new URL(rest[0]));
    default:
      usage();
  }
}

class Mismatch extends Error {}

function check(cond, msg) {
  if (!cond) throw new Mismatch(msg);
}

function texts(result) {
  return (result.content ?? []).filter((c) => c.type === 'text').map((c) => c.text).join('\n');
}

// The client's name (E2E_CLIENT_NAME; "claude-code" and "codex-mcp-client"
// play hosts that give their model structuredContent and drop the text, which
// the bridge's default --result-text known sends no duplicate text block;
// "claude-ai" plays Claude
// Desktop, which shows its model the content alone, and is listed the tools
// without output schemas and sent the answer as text alone).
const CLIENT_NAME = process.env.E2E_CLIENT_NAME || 'mcpbridge-e2e-ts-client';
const STRUCTURED_ONLY = CLIENT_NAME === 'claude-code' || CLIENT_NAME === 'codex-mcp-client';
const TEXT_ONLY = CLIENT_NAME === 'claude-ai';

// What a model reads of a result: its text, or, when it has none, its
// structuredContent as a host stringifies it.
function modelText(result) {
  const t = texts(result);
  return t !== '' ? t : JSON.stringify(result.structuredContent ?? null);
}

async function run(kind, rest) {
  const transport = transportFor(kind, rest);
  let stderr = '';
  if (kind === 'stdio') {
    transport.stderr?.on('data', (d) => {
      stderr += d;
    });
  }
  const client = new Client({ name: CLIENT_NAME, version: '1.0.0' });
  try {
    await client.connect(transport);
    const server = client.getServerVersion();
    check(server?.name === 'mcpbridge', `serverInfo.name = ${JSON.stringify(server?.name)}; want "mcpbridge"`);
    check(client.getServerCapabilities()?.tools, 'server does not declare the tools capability');

    const { tools } = await client.listTools();
    const names = tools.map((t) => t.name);
    for (const want of ['listNotes', 'getNote', 'getAccount']) {
      check(names.includes(want), `tools/list lacks ${want}; got ${names.join(', ')}`);
    }
    for (const t of tools) {
      check(t.inputSchema?.type === 'object', `tool ${t.name}: inputSchema.type = ${JSON.stringify(t.inputSchema?.type)}; want "object"`);
      check(typeof t.description === 'string' && t.description !== '', `tool ${t.name} has no description`);
    }
    const listNotes = tools.find((t) => t.name === 'listNotes');
    if (TEXT_ONLY) {
      check(listNotes.outputSchema === undefined, `listNotes for ${CLIENT_NAME}: an output schema was listed: ${JSON.stringify(listNotes.outputSchema)?.slice(0, 200)}`);
    } else {
      check(listNotes.outputSchema?.type === 'object', `listNotes: outputSchema.type = ${JSON.stringify(listNotes.outputSchema?.type)}; want "object"`);
    }

    const list = await client.callTool({ name: 'listNotes', arguments: { limit: 10 } });
    check(!list.isError, `listNotes returned isError: ${texts(list)}`);
    check(modelText(list).includes('Welcome'), `listNotes result lacks the seeded note "Welcome": ${modelText(list).slice(0, 300)}`);
    if (TEXT_ONLY) {
      check(list.structuredContent === undefined, `listNotes for ${CLIENT_NAME}: structuredContent was sent: ${JSON.stringify(list.structuredContent)?.slice(0, 300)}`);
      check(Array.isArray(JSON.parse(texts(list)).notes), `listNotes for ${CLIENT_NAME}: the text is not the answer: ${texts(list).slice(0, 300)}`);
    } else {
      check(Array.isArray(list.structuredContent?.notes), `listNotes structuredContent.notes is not an array: ${JSON.stringify(list.structuredContent)?.slice(0, 300)}`);
    }
    if (STRUCTURED_ONLY) {
      check(texts(list) === '', `listNotes for ${CLIENT_NAME}: a duplicate text block was sent: ${texts(list).slice(0, 300)}`);
    } else {
      check(texts(list).includes('Welcome'), `listNotes text lacks the seeded note "Welcome": ${texts(list).slice(0, 300)}`);
    }

    const account = await client.callTool({ name: 'getAccount', arguments: {} });
    const raw = JSON.stringify(account);
    check(!account.isError, `getAccount returned isError: ${texts(account)}`);
    check(modelText(account).includes(MASK), `getAccount result lacks ${MASK}: ${modelText(account)}`);
    check(modelText(account).includes('demo@example.com'), `getAccount result lacks the (non-secret) user: ${modelText(account)}`);
    for (const s of DEMO_SECRETS) {
      check(!raw.includes(s), `getAccount result leaks the demo secret ${s}: ${raw}`);
    }

    const bad = await client.callTool({ name: 'getNote', arguments: { id: 'not-a-number' } });
    check(bad.isError === true, `getNote with id "not-a-number": isError = ${bad.isError}; want true (${texts(bad)})`);

    let unknownErr;
    try {
      await client.callTool({ name: 'no_such_tool', arguments: {} });
    } catch (e) {
      unknownErr = e;
    }
    check(unknownErr, 'calling an unknown tool succeeded; want a JSON-RPC error');

    console.log(`ts-sdk client ${kind} as ${CLIENT_NAME}: ok (${tools.length} tools, server ${server.name} ${server.version})`);
  } catch (e) {
    if (stderr) console.error(`--- bridge stderr ---\n${stderr.slice(-4000)}`);
    throw e;
  } finally {
    await client.close().catch(() => {});
  }
}

const [kind, ...rest] = process.argv.slice(2);
if (!kind) usage();
const timer = setTimeout(() => {
  console.error(`ts-sdk client ${kind}: FAIL: no result within ${DEADLINE_MS} ms`);
  process.exit(1);
}, DEADLINE_MS);
try {
  await run(kind, rest);
  clearTimeout(timer);
  process.exit(0);
} catch (e) {
  console.error(`ts-sdk client ${kind}: FAIL: ${e instanceof Mismatch ? e.message : e?.stack ?? e}`);
  process.exit(1);
}
