#!/usr/bin/env node
// A drifting upstream for testdata/e2e/drift.yaml: GET /shapes/SHAPE/KIND
// answers SHAPE's conforming JSON value (kind "none") or that value drifted
// from the declared response schema, as real APIs drift: "null" (the whole
// answer), "missing-required", "extra-property", "wrong-type" (a scalar of
// another type) and "outside-enum". Every answer but null carries the
// marker "drift-SHAPE-KIND" in a field that does not drift, so that the
// client can check the answer reached it. Listens on 127.0.0.1:0 and logs
// "listening on http://127.0.0.1:PORT" on stderr.
//
//   node drift-upstream.mjs
import http from 'node:http';

// Per shape: the conforming value, the object that drifts (a path into
// the value), and which keys drift how.
const SHAPES = {
  user: { value: { id: 1, name: '', role: 'admin' }, at: [], marker: 'name', missing: 'role', wrong: ['id', 'one'], enumKey: 'role' },
  order: { value: { id: '', total: 9.5, status: 'open', items: [{ sku: 'a', qty: 1 }] }, at: [], marker: 'id', missing: 'status', wrong: ['total', 'nine'], enumKey: 'status' },
  list: { value: [{ id: 1, name: '', role: 'member' }, { id: 2, name: 'b', role: 'admin' }], at: [0], marker: 'name', missing: 'id', wrong: ['id', true], enumKey: 'role' },
  page: { value: { label: '', next: null, items: [{ id: 1, state: 'a' }] }, at: ['items', 0], marker: '../label', missing: 'state', wrong: ['id', '1'], enumKey: 'state' },
  flag: { value: { enabled: true, level: 'low', label: '' }, at: [], marker: 'label', missing: 'enabled', wrong: ['enabled', 'yes'], enumKey: 'level' },
  nested: { value: { count: 3, owner: { login: '', kind: 'user' } }, at: ['owner'], marker: 'login', missing: 'kind', wrong: ['kind', 7], enumKey: 'kind' },
  count: { value: { count: 3, unit: 'items', label: '' }, at: [], marker: 'label', missing: 'count', wrong: ['count', 'three'], enumKey: 'unit' },
  event: { value: { type: 'created', at: '2024-01-02T03:04:05Z', label: '', payload: { id: 1 } }, at: [], marker: 'label', missing: 'at', wrong: ['label', 12], enumKey: 'type', wrongMarker: 'type' },
  strict: { value: { a: '', b: 'x' }, at: [], marker: 'a', missing: 'b', wrong: ['b', false], enumKey: 'b' },
  tags: { value: { owner: '', tags: ['red'] }, at: [], marker: 'owner', missing: 'tags', wrong: ['tags', 'red'], enumKey: 'tags' },
};



function answer(shape, kind) {
  const s = SHAPES[shape];
  const value = structuredClone(s.value);
  let obj = value;
  const parents = [];
  for (const step of s.at) {
    parents.push(obj);
    obj = obj[step];
  }
  const marker = `drift-${shape}-${kind}`;
  if (s.marker.startsWith('../')) parents[0][s.marker.slice(3)] = marker;
  else obj[s.marker] = marker;
  switch (kind) {
    case 'none':
      break;
    case 'null':
      return null;
    case 'missing-required':
      delete obj[s.missing];
      break;
    case 'extra-property':
      obj.unexpected_field = 'surprise';
      break;
    case 'wrong-type':
      obj[s.wrong[0]] = s.wrong[1];
      if (s.wrong[0] === s.marker) obj[s.wrongMarker] = marker;
      break;
    case 'outside-enum':
      obj[s.enumKey] = Array.isArray(obj[s.enumKey]) ? ['not-in-enum'] : 'not-in-enum';
      break;
    default:
      return undefined;
  }
  return value;
}

const server = http.createServer((req, res) => {
  const m = /^\/shapes\/([a-z]+)\/([a-z-]+)$/.exec(new URL(req.url, 'http://x').pathname);
  const body = m && SHAPES[m[1]] ? answer(m[1], m[2]) : undefined;
  if (body === undefined) {
    res.writeHead(404, { 'Content-Type': 'application/json' });
    res.end('{"error":"no such shape or kind"}');
    return;
  }
  res.writeHead(200, { 'Content-Type': 'application/json' });
  res.end(JSON.stringify(body));
});
server.listen(0, '127.0.0.1', () => {
  console.error(`listening on http://127.0.0.1:${server.address().port}`);
});
for (const sig of ['SIGTERM', 'SIGINT']) process.on(sig, () => server.close(() => process.exit(0)));
