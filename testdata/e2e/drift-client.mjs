#!/usr/bin/env node
// Drifting answers through the official MCP TypeScript SDK client: the SDK
// client checks structuredContent against a tool's outputSchema and throws
// when they disagree, so a bridge that passed a drifted answer on as
// conforming structuredContent would break real clients. The bridge (over
// stdio, spawned with drift.yaml and the given upstream) must give every
// answer as a result the SDK accepts, and the answer must be visible: its
// marker (drift-SHAPE-KIND) in a text block or in structuredContent, or,
// for the null answer, "null" there.
//
//   node drift-client.mjs BINARY UPSTREAM_URL
//
// Every tool of drift.yaml is called with each drift kind (10 x 6 calls).
// Any failure exits 1 with every failing call on stderr.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

const KINDS = ['none', 'null', 'missing-required', 'extra-property', 'wrong-type', 'outside-enum'];
const DEADLINE_MS = 60_000;
// Known rejections, each with the message the SDK gives and why (none
// today: a null answer gets structuredContent {} and the text "null").
const KNOWN = {};
const [bin, upstream] = process.argv.slice(2);
if (!bin || !upstream) {
  console.error('usage: node drift-client.mjs BINARY UPSTREAM_URL');
  process.exit(2);
}
const spec = path.join(path.dirname(fileURLToPath(import.meta.url)), 'drift.yaml');

function texts(result) {
  return (result.content ?? []).filter((c) => c.type === 'text').map((c) => c.text).join('\n');
}

async function run() {
  const transport = new StdioClientTransport({
    command: bin,
    args: ['serve', '--spec', spec, '--all-operations', '--upstream', upstream, '--no-cache'],
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (d) => {
    stderr += d;
  });
  const client = new Client({ name: 'mcpbridge-e2e-drift', version: '1.0.0' });
  const failures = [];
  let calls = 0;
  let withSchema = 0;
  try {
    await client.connect(transport);
    const { tools } = await client.listTools();
    if (tools.filter((t) => t.name !== 'ping').length !== 10) failures.push(`tools/list: ${tools.length} tools; want the 10 of drift.yaml (and ping)`);
    const known = [];
    for (const tool of tools.filter((t) => t.name !== 'ping')) {
      if (tool.outputSchema) withSchema++;
      const shape = tool.name.replace(/^get_/, '');
      for (const kind of KINDS) {
        calls++;
        const label = `${tool.name} kind=${kind}`;
        let result;
        try {
          // callTool validates structuredContent against the outputSchema
          // listed by tools/list and throws when it does not match.
          result = await client.callTool({ name: tool.name, arguments: { kind } });
        } catch (e) {
          const msg = String(e?.message ?? e);
          if (KNOWN[kind] && msg.includes(KNOWN[kind].want)) {
            known.push(label);
            continue;
          }
          failures.push(`${label}: the TS SDK client rejected the result: ${msg.slice(0, 400)}`);
          continue;
        }
        if (KNOWN[kind]) console.log(`${label}: accepted now; remove KNOWN.${kind} from drift-client.mjs`);
        if (result.isError) {
          failures.push(`${label}: isError: ${texts(result).slice(0, 300)}`);
          continue;
        }
        const seen = texts(result) + '\n' + JSON.stringify(result.structuredContent ?? null);
        const want = kind === 'null' ? 'null' : `drift-${shape}-${kind}`;
        if (!seen.includes(want)) {
          failures.push(`${label}: the answer is not visible (no ${JSON.stringify(want)} in text or structuredContent): ${JSON.stringify(result).slice(0, 400)}`);
        }
      }
    }
    if (withSchema === 0) failures.push('no tool lists an outputSchema: the SDK client checks nothing');
    for (const [kind, k] of Object.entries(KNOWN)) {
      const n = known.filter((l) => l.endsWith(`kind=${kind}`)).length;
      if (n > 0) console.log(`known: ${n} calls with kind=${kind} rejected by the TS SDK: ${k.why}`);
    }
  } finally {
    await client.close().catch(() => {});
  }
  if (failures.length > 0) {
    if (stderr) console.error(`--- bridge stderr ---\n${stderr.slice(-3000)}`);
    console.error(failures.join('\n'));
    throw new Error(`${failures.length} of ${calls} calls failed`);
  }
  console.log(`ts-sdk drift: ok (${calls} calls over ${KINDS.length} drift kinds, ${withSchema} tools with an outputSchema, every result accepted by the TS SDK client but the known rejections above)`);
}

const timer = setTimeout(() => {
  console.error(`ts-sdk drift: FAIL: no result within ${DEADLINE_MS} ms`);
  process.exit(1);
}, DEADLINE_MS);
try {
  await run();
  clearTimeout(timer);
  process.exit(0);
} catch (e) {
  console.error(`ts-sdk drift: FAIL: ${e?.message ?? e}`);
  process.exit(1);
}
