// fidelity.mjs: request fidelity and strict clients over specs we have not
// seen. For each OpenAPI 3.x spec given, "mcpbridge serve --all-operations"
// runs under the official TypeScript SDK client (strict: it rejects a
// result whose structuredContent does not match the tool's outputSchema).
// Every listed inputSchema and outputSchema is compiled with Ajv2020. Up to
// FID_MAX tools per spec are called with arguments that fill every
// parameter the schema declares (optional ones too); the upstream records
// each request and the script checks it against the spec's own
// serialisation rules (path, query style/explode, header, cookie, body media
// type and JSON body). The upstream answers with a value generated from the
// operation's 2xx response schema, or (FID_DRIFT=1) that value drifted.
//
// usage: [FID_MAX=40] [FID_MODE=strict|tolerant] [FID_DRIFT=1] [FID_VERBOSE=1] node testdata/e2e/fidelity.mjs MCPBRIDGE SPEC...
// Printed: COMPILE (a listed schema Ajv2020 refuses), THROW (the client
// threw on a result), MISMATCH (the upstream request differs from what the
// spec says: the expected and received parts), ISERROR (an error result
// other than an argument the generator got wrong), STRICTERR (FID_MODE=strict:
// a generated answer refused; the spec's fault or the bridge's, read the
// reason), then one JSON line of counts. Nested values inside arrays and
// objects (the --nested-style convention) are not checked; values are
// compared decoded. OpenAPI 3.x documents only (Swagger 2.0 is skipped by
// the generator's parameter lookup, not converted).
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import Ajv2020 from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import YAML from "yaml";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import http from "node:http";

const [bin, ...specs] = process.argv.slice(2);
const MAX = Number(process.env.FID_MAX || 40);
const MODE = process.env.FID_MODE || "tolerant";
const DRIFT = process.env.FID_DRIFT === "1";
const VERBOSE = process.env.FID_VERBOSE === "1";

let current = null; // { answer, requests: [] }
const up = http.createServer((req, res) => {
  const chunks = [];
  req.on("data", c => chunks.push(c));
  req.on("end", () => {
    const r = { method: req.method, url: req.url, headers: req.headers, body: Buffer.concat(chunks) };
    if (current) current.requests.push(r);
    const a = current?.answer;
    if (a === undefined) { res.writeHead(204); res.end(); return; }
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify(a));
  });
});
await new Promise(r => up.listen(0, "127.0.0.1", r));
const BASE = "/base/v9";
const upstream = `http://127.0.0.1:${up.address().port}${BASE}`;

const sum = { specs: 0, tools: 0, schemas: 0, compileFail: 0, calls: 0, throws: 0, isError: 0, ok: 0, sc: 0, requests: 0, mismatches: 0, noRequest: 0, argsInvalid: 0 };
const findings = [];
function report(kind, spec, tool, msg) {
  findings.push({ kind, spec, tool, msg });
  console.log(kind, spec, tool, msg.slice(0, 400));
}

function mkResolver(doc) {
  const get = (ref) => {
    if (!ref.startsWith("#/")) return {};
    let x = doc;
    for (const p of ref.slice(2).split("/")) {
      x = x?.[decodeURIComponent(p.replace(/~1/g, "/").replace(/~0/g, "~"))];
    }
    return x ?? {};
  };
  const R = (x, n = 0) => (x && typeof x === "object" && typeof x.$ref === "string" && n < 20) ? R(get(x.$ref), n + 1) : x;
  return R;
}

// gen makes a value of schema s (an inputSchema from the bridge, already
// plain JSON Schema with $defs). full: fill optional properties too.
function gen(s, root, full, depth = 0, name = "") {
  if (s === true || s === undefined || s === null) return "v";
  if (s.$ref) {
    const m = s.$ref.match(/^#\/\$defs\/(.+)$/);
    if (m && depth < 6) return gen(root.$defs?.[decodeURIComponent(m[1])], root, full, depth + 1, name);
    return "v";
  }
  if (s.const !== undefined) return s.const;
  if (s.enum?.length) return s.enum.find(v => v !== null) ?? s.enum[0];
  if (s.default !== undefined && !full) return s.default;
  if (s.examples?.length && typeof s.examples[0] !== "object") return s.examples[0];
  if (s.allOf) {
    let out;
    for (const b of s.allOf) {
      const v = gen(b, root, full, depth + 1, name);
      if (v && typeof v === "object" && !Array.isArray(v)) out = Object.assign(out && typeof out === "object" ? out : {}, v);
      else if (out === undefined) out = v;
    }
    if (s.properties) { const v = gen({ ...s, allOf: undefined }, root, full, depth + 1, name); if (v && typeof v === "object") out = Object.assign(out || {}, v); }
    return out;
  }
  if (s.oneOf || s.anyOf) {
    const alts = (s.oneOf || s.anyOf).filter(a => !(a && a.type === "null"));
    const v = gen(alts[0] ?? {}, root, full, depth + 1, name);
    if (s.properties && v && typeof v === "object" && !Array.isArray(v)) Object.assign(v, gen({ ...s, oneOf: undefined, anyOf: undefined }, root, full, depth + 1, name));
    return v;
  }
  let t = Array.isArray(s.type) ? s.type.find(x => x !== "null") : s.type;
  if (!t) t = s.properties ? "object" : s.items ? "array" : "string";
  switch (t) {
    case "integer": return Math.max(s.minimum ?? 3, s.exclusiveMinimum !== undefined ? s.exclusiveMinimum + 1 : -Infinity, 3) <= (s.maximum ?? Infinity) ? Math.max(s.minimum ?? 3, 3) : (s.maximum ?? 3);
    case "number": return s.minimum !== undefined ? s.minimum + (s.multipleOf ? 0 : 0.5) : 2.5;
    case "boolean": return true;
    case "null": return null;
    case "array": {
      if (depth > 5) return [];
      const n = Math.max(s.minItems ?? 0, full ? Math.min(2, s.maxItems ?? 2) : 0);
      const out = [];
      for (let i = 0; i < n; i++) out.push(gen(Array.isArray(s.items) ? s.items[0] : (s.prefixItems?.[i] ?? s.items), root, full, depth + 1, name + i));
      if (s.uniqueItems && out.length === 2 && JSON.stringify(out[0]) === JSON.stringify(out[1])) out.pop();
      return out;
    }
    case "object": {
      const o = {};
      if (depth > 5) return o;
      const req = new Set(s.required || []);
      for (const [k, p] of Object.entries(s.properties || {})) {
        if (!req.has(k) && (!full || depth > 3)) continue;
        o[k] = gen(p, root, full, depth + 1, k);
      }
      return o;
    }
    default: {
      const f = s.format;
      if (f === "date-time") return "2024-01-02T03:04:05Z";
      if (f === "date") return "2024-01-02";
      if (f === "time") return "03:04:05Z";
      if (f === "uuid") return "123e4567-e89b-12d3-a456-426614174000";
      if (f === "email") return "a@b.co";
      if (f === "uri" || f === "url") return "https://example.com/x?y=1";
      if (f === "ipv4") return "10.0.0.1";
      if (f === "hostname") return "example.com";
      if (f === "byte") return "aGVsbG8=";
      if (f === "binary" || s.contentEncoding === "base64") return "aGVsbG8=";
      if (s.pattern) return null;
      let v = `v ${name}&é/`;
      if (s.maxLength !== undefined && v.length > s.maxLength) v = "v".repeat(Math.max(1, s.maxLength));
      if (s.minLength !== undefined && v.length < s.minLength) v = v + "x".repeat(s.minLength - v.length);
      return v;
    }
  }
}
function prune(v) {
  if (Array.isArray(v)) return v.filter(x => x !== null).map(prune);
  if (v && typeof v === "object") { const o = {}; for (const [k, x] of Object.entries(v)) if (x !== null) o[k] = prune(x); return o; }
  return v;
}

// genOut makes an answer from an OpenAPI response schema (raw spec, 3.0 or 3.1).
function genOut(s, R, depth = 0, name = "") {
  s = R(s);
  if (!s || typeof s !== "object") return "v";
  if (s.const !== undefined) return s.const;
  if (s.enum?.length) return s.enum.find(v => v !== null) ?? s.enum[0];
  if (s.example !== undefined && typeof s.example !== "object") return s.example;
  if (s.allOf) {
    let out = {};
    for (const b of s.allOf) { const rb = R(b); if (!rb || (!rb.type && !rb.properties && !rb.enum && !rb.allOf && !rb.oneOf && !rb.anyOf && !rb.items && rb.const === undefined)) continue; const v = genOut(b, R, depth + 1, name); if (v && typeof v === "object" && !Array.isArray(v)) Object.assign(out, v); else out = v; }
    if (s.properties && out && typeof out === "object") Object.assign(out, genOut({ ...s, allOf: undefined }, R, depth + 1, name));
    return out;
  }
  if (s.oneOf || s.anyOf) {
    const alts = s.oneOf || s.anyOf;
    const i = 0;
    const v = genOut(alts[i], R, depth + 1, name);
    if (s.discriminator?.propertyName && v && typeof v === "object" && !Array.isArray(v)) {
      const ref = R(alts[i]) && alts[i].$ref;
      let key = ref ? ref.split("/").pop() : undefined;
      for (const [k, m] of Object.entries(s.discriminator.mapping || {})) if (m === ref || m === key) key = k;
      if (key) v[s.discriminator.propertyName] = key;
    }
    if (s.properties && v && typeof v === "object") Object.assign(v, genOut({ ...s, oneOf: undefined, anyOf: undefined, discriminator: undefined }, R, depth + 1, name));
    return v;
  }
  let t = Array.isArray(s.type) ? s.type.find(x => x !== "null") : s.type;
  if (!t) t = s.properties ? "object" : s.items ? "array" : "string";
  switch (t) {
    case "integer": return Math.max(s.minimum ?? 7, 7) <= (s.maximum ?? Infinity) ? Math.max(s.minimum ?? 7, 7) : s.maximum;
    case "number": return s.minimum ?? 7.5;
    case "boolean": return false;
    case "null": return null;
    case "array": {
      if (depth > 6) return [];
      const n = Math.max(s.minItems ?? 0, 1);
      const out = [];
      for (let i = 0; i < n; i++) out.push(genOut(s.prefixItems?.[i] ?? s.items, R, depth + 1, name));
      return out;
    }
    case "object": {
      const o = {};
      if (depth > 6) { return o; }
      for (const [k, p] of Object.entries(s.properties || {})) {
        if (R(p)?.writeOnly) continue;
        o[k] = genOut(p, R, depth + 1, k);
      }
      if (s.additionalProperties && typeof s.additionalProperties === "object" && !Object.keys(o).length) o.extra = genOut(s.additionalProperties, R, depth + 1, "extra");
      return o;
    }
    default: {
      const f = s.format;
      if (f === "date-time") return "2024-01-02T03:04:05Z";
      if (f === "date") return "2024-01-02";
      if (f === "uuid") return "123e4567-e89b-12d3-a456-426614174000";
      if (f === "email") return "a@b.co";
      if (f === "uri" || f === "url") return "https://example.com/x";
      if (f === "byte") return "aGVsbG8=";
      let v = "out-" + name;
      if (s.maxLength !== undefined && v.length > s.maxLength) v = "o".repeat(Math.max(1, s.maxLength));
      if (s.minLength !== undefined && v.length < s.minLength) v += "x".repeat(s.minLength - v.length);
      return v;
    }
  }
}
function drift(v, i) {
  if (!v || typeof v !== "object" || Array.isArray(v)) return v;
  const o = structuredClone(v);
  const keys = Object.keys(o);
  o.unexpected_extra = { z: [1, "2"] };
  if (keys.length) {
    const k = keys[i % keys.length];
    switch (i % 4) {
      case 0: o[k] = null; break;
      case 1: delete o[k]; break;
      case 2: o[k] = typeof o[k] === "number" ? String(o[k]) : typeof o[k] === "string" ? 12 : "str"; break;
      case 3: o[k] = []; break;
    }
  }
  return o;
}

// Serialisation of one parameter as OpenAPI 3 says, as a list of [name, value]
// pairs (query, cookie) or a single string (path, header). Values decoded.
function prim(v) { return typeof v === "string" ? v : JSON.stringify(v); }
function serialize(p, v) {
  const style = p.style || ({ query: "form", cookie: "form", path: "simple", header: "simple" })[p.in];
  const explode = p.explode ?? (style === "form");
  const n = p.name;
  if (p.content) return p.in === "query" || p.in === "cookie" ? [[n, JSON.stringify(v)]] : JSON.stringify(v);
  if (Array.isArray(v)) {
    if (v.some(x => x && typeof x === "object")) return undefined; // nested: bridge convention
    const s = v.map(prim);
    switch (style) {
      case "form": return explode ? s.map(x => [n, x]) : [[n, s.join(",")]];
      case "spaceDelimited": return explode ? s.map(x => [n, x]) : [[n, s.join(" ")]];
      case "pipeDelimited": return explode ? s.map(x => [n, x]) : [[n, s.join("|")]];
      case "simple": return s.join(",");
      case "label": return "." + s.join(explode ? "." : ",");
      case "matrix": return explode ? s.map(x => `;${n}=${x}`).join("") : `;${n}=` + s.join(",");
    }
    return undefined;
  }
  if (v && typeof v === "object") {
    const ent = Object.entries(v);
    if (ent.some(([, x]) => x && typeof x === "object")) return undefined;
    switch (style) {
      case "form": return explode ? ent.map(([k, x]) => [k, prim(x)]) : [[n, ent.map(([k, x]) => k + "," + prim(x)).join(",")]];
      case "deepObject": return ent.map(([k, x]) => [`${n}[${k}]`, prim(x)]);
      case "simple": return ent.map(([k, x]) => k + (explode ? "=" : ",") + prim(x)).join(",");
      case "label": return "." + ent.map(([k, x]) => k + (explode ? "=" : ",") + prim(x)).join(explode ? "." : ",");
      case "matrix": return explode ? ent.map(([k, x]) => `;${k}=${prim(x)}`).join("") : `;${n}=` + ent.map(([k, x]) => k + "," + prim(x)).join(",");
    }
    return undefined;
  }
  const s = prim(v);
  switch (style) {
    case "label": return "." + s;
    case "matrix": return `;${n}=${s}`;
    case "form": case "spaceDelimited": case "pipeDelimited": case "deepObject": return [[n, s]];
    default: return s;
  }
}
function decodeQ(raw) {
  if (!raw) return [];
  return raw.split("&").filter(Boolean).map(kv => {
    const i = kv.indexOf("=");
    const k = i < 0 ? kv : kv.slice(0, i), v = i < 0 ? "" : kv.slice(i + 1);
    const d = x => { try { return decodeURIComponent(x.replace(/\+/g, " ")); } catch { return x; } };
    return [d(k), d(v)];
  });
}
const IGNORED_HEADERS = new Set(["accept", "content-type", "authorization", "host", "content-length", "transfer-encoding", "connection", "keep-alive", "proxy-connection", "te", "trailer", "upgrade"]);
const MEDIA_ORDER = [m => m === "application/json", m => /\+json$/.test(m) || /^application\/json;/.test(m), m => m === "application/x-www-form-urlencoded", m => m === "multipart/form-data", m => m === "text/plain", m => true];

function checkRequest(specName, toolName, op, R, inputSchema, args, req) {
  const probs = [];
  const u = new URL(req.url, "http://x");
  // method
  if (req.method !== op.method.toUpperCase()) probs.push(`method ${req.method} != ${op.method}`);
  // params
  const params = new Map();
  for (const p of [...(op.pathItem.parameters || []), ...(op.op.parameters || [])].map(x => R(x))) if (p?.name) params.set(p.in + ":" + p.name, p);
  const props = inputSchema.properties || {};
  const argName = (p) => {
    for (const [k, s] of Object.entries(props)) if (typeof s.description === "string" && s.description.startsWith(`Sent as the ${p.in} parameter "${p.name}"`)) return k;
    if (props[p.name + "__" + p.in]) return p.name + "__" + p.in;
    if (props[p.name] && p.name !== "body") return p.name;
    if (props["body__" + p.in] && p.name === "body") return "body__" + p.in;
    return undefined;
  };
  // path: match the template
  let tmpl = op.path.split("?")[0].split("#")[0];
  let expPath = BASE + tmpl.replace(/\{([^}]+)\}/g, (m, name) => {
    const p = params.get("path:" + name);
    if (!p) return m;
    const a = argName(p);
    const v = args[a];
    if (v === undefined) return m;
    const s = serialize(p, v);
    if (s === undefined) return "\u0000";
    return encodeURIComponent(s).replace(/%2C/g, ",").replace(/%3B/g, ";").replace(/%3D/g, "=");
  });
  const gotPath = u.pathname;
  const norm = x => { try { return decodeURIComponent(x); } catch { return x; } };
  if (!expPath.includes("\u0000") && norm(gotPath) !== norm(expPath)) probs.push(`path ${gotPath} != ${expPath}`);
  // query
  const gotQ = decodeQ(u.search.slice(1));
  const expQ = [];
  const fixedQ = op.path.includes("?") ? decodeQ(op.path.split("?")[1]).filter(([k, v]) => !/^\{.*\}$/.test(v)) : [];
  let queryNested = false;
  for (const p of params.values()) {
    if (p.in !== "query") continue;
    const a = argName(p);
    if (a === undefined) { if (!IGNORED_HEADERS.has(p.name.toLowerCase())) probs.push(`no argument for query ${p.name}`); continue; }
    if (args[a] === undefined) continue;
    const s = serialize(p, args[a]);
    if (s === undefined) { queryNested = true; continue; }
    expQ.push(...s);
  }
  if (!queryNested) {
    const key = l => l.map(([k, v]) => k + "=" + v).sort().join("&");
    const got = gotQ.filter(([k]) => !fixedQ.some(([fk]) => fk === k));
    if (key(got) !== key(expQ)) probs.push(`query got ${key(got)} want ${key(expQ)}`);
  }
  // headers
  for (const p of params.values()) {
    if (p.in !== "header" || IGNORED_HEADERS.has(p.name.toLowerCase())) continue;
    const a = argName(p);
    if (a === undefined) { probs.push(`no argument for header ${p.name}`); continue; }
    if (args[a] === undefined) continue;
    const s = serialize(p, args[a]);
    if (s === undefined) continue;
    const raw = req.headers[p.name.toLowerCase()];
    const got = raw === undefined ? raw : Buffer.from(raw, "latin1").toString("utf8");
    if (got !== s) probs.push(`header ${p.name}: got ${JSON.stringify(got)} want ${JSON.stringify(s)}`);
  }
  // cookies
  const cookies = decodeQ((req.headers.cookie || "").split(/;\s*/).join("&"));
  for (const p of params.values()) {
    if (p.in !== "cookie") continue;
    const a = argName(p);
    if (a === undefined) { probs.push(`no argument for cookie ${p.name}`); continue; }
    if (args[a] === undefined) continue;
    const s = serialize(p, args[a]);
    if (s === undefined) continue;
    const want = s.map(([k, v]) => k + "=" + v).sort().join("; ");
    const got = cookies.filter(([k]) => s.some(([sk]) => sk === k)).map(([k, v]) => k + "=" + v).sort().join("; ");
    if (want !== got) probs.push(`cookie ${p.name}: got ${JSON.stringify(req.headers.cookie)} want ${want}`);
  }
  // body
  const rb = R(op.op.requestBody);
  if (rb?.content && args.body !== undefined) {
    const medias = Object.keys(rb.content);
    let chosen;
    for (const f of MEDIA_ORDER) { chosen = medias.find(m => f(m.toLowerCase())); if (chosen) break; }
    const ct = (req.headers["content-type"] || "").split(";")[0].trim().toLowerCase();
    const cm = (chosen || "").split(";")[0].trim().toLowerCase();
    if (cm.includes("*")) {
      // wildcard: anything matching
    } else if (ct !== cm) probs.push(`content-type ${ct} != ${cm} (of ${medias.join(",")})`);
    if (/json/.test(cm) && ct === cm) {
      let got;
      try { got = JSON.parse(req.body.toString()); } catch (e) { probs.push(`body not JSON: ${req.body.toString().slice(0, 80)}`); }
      if (got !== undefined && JSON.stringify(sortKeys(got)) !== JSON.stringify(sortKeys(args.body))) probs.push(`json body got ${JSON.stringify(got).slice(0, 200)} want ${JSON.stringify(args.body).slice(0, 200)}`);
    }
    if (cm === "application/x-www-form-urlencoded" && ct === cm && args.body && typeof args.body === "object") {
      const got = decodeQ(req.body.toString());
      const enc = rb.content[chosen].encoding || {};
      for (const [k, v] of Object.entries(args.body)) {
        const e = enc[k] || {};
        if (v && typeof v === "object" && !e.style && !e.explode) continue;
        if (v && typeof v === "object") continue;
        const g = got.filter(([gk]) => gk === k).map(([, gv]) => gv);
        if (g.length !== 1 || g[0] !== prim(v)) probs.push(`form field ${k}: got ${JSON.stringify(g)} want ${prim(v)}`);
      }
    }
    if (cm === "multipart/form-data" && ct === cm && args.body && typeof args.body === "object") {
      const b = req.body.toString("latin1");
      for (const k of Object.keys(args.body)) if (!b.includes(`name="${k}"`)) probs.push(`multipart part ${k} missing`);
      const enc = rb.content[chosen].encoding || {};
      for (const [k, e] of Object.entries(enc)) {
        if (!e.contentType || args.body[k] === undefined) continue;
        const m = b.match(new RegExp(`name="${k.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}"[^\\r]*\\r\\n(?:[^\\r]+\\r\\n)*`));
        const want = e.contentType.split(",")[0].trim().toLowerCase();
        if (m && !want.includes("*") && !m[0].toLowerCase().includes("content-type: " + want)) probs.push(`multipart part ${k} lacks Content-Type ${want}: ${JSON.stringify(m[0]).slice(0, 200)}`);
        for (const [hn] of Object.entries(e.headers || {})) if (m && !m[0].toLowerCase().includes(hn.toLowerCase() + ":")) probs.push(`multipart part ${k} lacks header ${hn}`);
      }
    }
  }
  return probs;
}
function sortKeys(v) {
  if (Array.isArray(v)) return v.map(sortKeys);
  if (v && typeof v === "object") return Object.fromEntries(Object.keys(v).sort().map(k => [k, sortKeys(v[k])]));
  return v;
}

for (const spec of specs) {
  const sname = spec.split("/").slice(-2).join("/");
  let doc;
  try { doc = YAML.parse(fs.readFileSync(spec, "utf8"), { maxAliasCount: -1 }); } catch (e) { report("PARSE", sname, "", e.message); continue; }
  const R = mkResolver(doc);
  let listing;
  try {
    listing = JSON.parse(execFileSync(bin, ["tools", "--spec", spec, "--all-operations", "--upstream", upstream, "--json", "--verbose", "--no-cache", "--output-schema", MODE], { maxBuffer: 1 << 28, stdio: ["ignore", "pipe", "pipe"] }).toString());
  } catch (e) { report("TOOLSFAIL", sname, "", (e.stderr || e.message).toString().slice(0, 400)); continue; }
  const opOf = new Map();
  for (const x of listing) if (x.operation) {
    const pathItem = R(doc.paths?.[x.operation.path]) || {};
    opOf.set(x.tool.name, { method: x.operation.method.toLowerCase(), path: x.operation.path, pathItem, op: R(pathItem[x.operation.method.toLowerCase()]) || {} });
  }
  sum.specs++;
  const t = new StdioClientTransport({ command: bin, args: ["serve", "--spec", spec, "--all-operations", "--upstream", upstream, "--timeout", "5s", "--no-cache", "--output-schema", MODE], stderr: "pipe" });
  let errText = "";
  t.stderr?.on("data", d => { errText += d.toString(); if (errText.length > 50000) errText = errText.slice(-50000); });
  const c = new Client({ name: "fidelity", version: "1" });
  try {
    await c.connect(t);
    const { tools } = await c.listTools();
    const ajv = new Ajv2020({ strict: false, allErrors: false, validateFormats: true, logger: false });
    addFormats(ajv);
    const validIn = new Map();
    for (const tool of tools) {
      if (tool.name === "ping") continue;
      sum.tools++;
      for (const [kind, s] of [["input", tool.inputSchema], ["output", tool.outputSchema]]) {
        if (!s) continue;
        sum.schemas++;
        try { const v = ajv.compile(s); if (kind === "input") validIn.set(tool.name, v); } catch (e) { sum.compileFail++; report("COMPILE", sname, tool.name, kind + ": " + e.message); }
      }
    }
    const picked = tools.filter(x => x.name !== "ping" && opOf.has(x.name)).slice(0, MAX);
    let i = 0;
    for (const tool of picked) {
      const op = opOf.get(tool.name);
      let args = prune(gen(tool.inputSchema, tool.inputSchema, true));
      const v = validIn.get(tool.name);
      if (v && !v(args)) {
        const a2 = prune(gen(tool.inputSchema, tool.inputSchema, false));
        if (v(a2)) args = a2; else { sum.argsInvalid++; if (VERBOSE) console.log("ARGSINVALID", sname, tool.name, JSON.stringify(v.errors).slice(0, 200)); }
      }
      // answer
      let answer;
      for (const [code, resp] of Object.entries(op.op.responses || {})) {
        if (!/^2/.test(code)) continue;
        const r = R(resp);
        const mt = Object.keys(r?.content || {}).find(m => /json/i.test(m));
        if (mt) { answer = genOut(r.content[mt].schema || {}, R); break; }
      }
      if (answer === undefined) answer = { ok: true };
      if (DRIFT) answer = drift(answer, i);
      i++;
      current = { answer, requests: [] };
      sum.calls++;
      try {
        const r = await c.callTool({ name: tool.name, arguments: args });
        if (r.isError) {
          sum.isError++;
          const txt = (r.content || []).map(b => b.text || "").join(" | ");
          if (/invalid arguments|refused|not sent/i.test(txt) || !current.requests.length) (VERBOSE || !/invalid arguments/.test(txt)) && report("ISERROR", sname, tool.name, txt.slice(0, 300) + " ARGS " + JSON.stringify(args).slice(0, 200));
          else if (MODE === "strict" && !DRIFT) report("STRICTERR", sname, tool.name, txt.slice(-300));
        } else sum.ok++;
        if (r.structuredContent) sum.sc++;
      } catch (e) {
        sum.throws++;
        report("THROW", sname, tool.name, e.message.slice(0, 300));
      }
      if (!current.requests.length) { sum.noRequest++; continue; }
      sum.requests++;
      const probs = checkRequest(sname, tool.name, op, R, tool.inputSchema, args, current.requests[0]);
      if (probs.length) { sum.mismatches++; report("MISMATCH", sname, tool.name, op.method + " " + op.path + ": " + probs.join("; ") + " ARGS " + JSON.stringify(args).slice(0, 300)); }
    }
  } catch (e) {
    report("LISTFAIL", sname, "", e.message.slice(0, 200) + " " + errText.split("\n").filter(l => /ERROR|FATAL|panic/.test(l)).slice(0, 3).join(" | ").slice(0, 400));
  }
  try { await c.close(); } catch {}
  current = null;
}
console.log(JSON.stringify(sum));
up.close();
process.exit(0);
