/**
 * Regression tests of security issue #15 (black-box audit), items 7 and 8: hostile input answers
 * a small 4xx naming the problem, never a 500, and never holds the other requests.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { inject, newGroup, newUser, setup, type TestApp, type TestUser } from '../helpers/app.js';
import { item, newDevice, send } from '../helpers/actual.js';
import { minimalZip, uploadZip } from '../helpers/gtfs.js';
import { MAX_CSV_COLUMNS, MAX_CSV_LINE_BYTES, readCsv } from '../../src/platform/csv.js';
import { MAX_LISTED_ISSUES, listedIssues } from '../../src/platform/http/errors.js';
import { MAX_UNIX_SECONDS } from '../../src/platform/http/params.js';
import { MAX_JSON_DEPTH } from '../../src/platform/http/validation.js';

/** When the planning handler started and ended its last request (performance.now()). */
const planning = { started: 0, ended: 0 };
const hooks = (app: FastifyInstance) => {
  app.addHook('preHandler', async (req) => {
    if (req.url.includes('/planning')) planning.started = performance.now();
  });
  app.addHook('onResponse', async (req) => {
    if (req.url.includes('/planning')) planning.ended = performance.now();
  });
};

let t: TestApp;
let g: string;
let admin: TestUser;
let reader: TestUser;
let su: TestUser;
beforeAll(async () => {
  t = await setup({ extraRoutes: hooks });
  g = await newGroup(t);
  admin = await newUser(t, { groupId: g, role: 'admin' });
  reader = await newUser(t, { groupId: g, role: 'reader' });
  su = await newUser(t, { superuser: true });
});
afterAll(async () => t?.close());

const csv = (url: string, method: 'PUT' | 'POST', payload: string) => inject(t, { method, url, headers: { ...admin.auth, 'content-type': 'text/csv' }, payload });
const CSV_INPUTS = () => [
  { name: 'planning', method: 'PUT' as const, url: `/api/v4/groups/${g}/planning?format=csv` },
  { name: 'vehicles import', method: 'POST' as const, url: `/api/v4/groups/${g}/import/vehicles` },
  { name: 'drivers import', method: 'POST' as const, url: `/api/v4/groups/${g}/import/drivers` },
];
const MILLION_COLUMNS = `${Array.from({ length: 1_000_000 }, (_, i) => `c${i}`).join(';')}\r\n`;
const messages = (r: { json: any }) => (r.json.detail as { msg: string }[]).map((d) => d.msg).join(' | ');

describe('item 7: CSV amplification', () => {
  it('a CSV header of 1,000,000 columns answers a small 422 naming the line, on every CSV input', async () => {
    for (const input of CSV_INPUTS()) {
      const r = await csv(input.url, input.method, MILLION_COLUMNS);
      expect(r.status, input.name).toBe(422);
      expect(r.body.length, input.name).toBeLessThan(1000);
      expect(r.json.detail).toHaveLength(1);
      expect(r.json.detail[0].loc).toEqual(['body', 1]);
      expect(messages(r)).toContain(`line 1: the line is longer than ${MAX_CSV_LINE_BYTES} bytes`);
    }
  });

  it('a CSV line of 10 MB answers a small 422 naming its line, on every CSV input', async () => {
    for (const input of CSV_INPUTS()) {
      const r = await csv(input.url, input.method, `trip_id;date\r\n${'x'.repeat(10_000_000)};20260316\r\n`);
      expect(r.status, input.name).toBe(422);
      expect(r.body.length, input.name).toBeLessThan(1000);
      expect(r.json.detail[0].loc).toEqual(['body', 2]);
      expect(messages(r)).toContain('line 2: the line is longer than');
    }
  });

  it('a CSV header of more columns than the bound answers one 422 naming the count', async () => {
    for (const input of CSV_INPUTS()) {
      const r = await csv(input.url, input.method, `${';'.repeat(5000)}\r\n`);
      expect(r.status, input.name).toBe(422);
      expect(r.body.length).toBeLessThan(1000);
      expect(messages(r)).toContain(`line 1: 5001 columns; a line holds at most ${MAX_CSV_COLUMNS}`);
    }
  });

  it('unknown planning columns are one error, not one per column', async () => {
    const header = `trip_id;date;${Array.from({ length: 500 }, (_, i) => `extra${i}`).join(';')}\r\nT1;20260316\r\n`;
    const r = await csv(CSV_INPUTS()[0]!.url, 'PUT', header);
    expect(r.status).toBe(422);
    expect(r.json.detail).toHaveLength(1);
    expect(r.json.detail[0]).toMatchObject({ loc: ['body', 1], type: 'extra_forbidden' });
    expect(r.json.detail[0].msg).toContain('Unknown columns "extra0", "extra1"');
    expect(r.json.detail[0].msg).toContain('and 490 more');
    const long = await csv(CSV_INPUTS()[0]!.url, 'PUT', `trip_id;date;${Array.from({ length: 20 }, (_, i) => `${i}${'x'.repeat(3000)}`).join(';')}\r\n`);
    expect(long.status).toBe(422);
    expect(long.body.length).toBeLessThan(2000);
  });

  it('a CSV of 100,000 bad lines lists at most MAX_LISTED_ISSUES problems and says how many more', async () => {
    const r = await csv(CSV_INPUTS()[0]!.url, 'PUT', `trip_id;date\r\n${'T;2026-03-16\r\n'.repeat(100_000)}`);
    expect(r.status).toBe(422);
    expect(r.json.detail).toHaveLength(MAX_LISTED_ISSUES + 1);
    expect(r.json.detail.at(-1)).toEqual({ loc: ['body'], msg: `${100_000 - MAX_LISTED_ISSUES} more problems are not listed`, type: 'too_many_errors' });
    expect(r.body.length).toBeLessThan(200_000);
  });

  it('a planning file of more lines than assignments allowed is refused at the first line too many', async () => {
    const r = await csv(CSV_INPUTS()[0]!.url, 'PUT', `trip_id;date\r\n${'T;20260316\r\n'.repeat(100_001)}`);
    expect(r.status).toBe(422);
    expect(messages(r)).toContain('line 100002: more than 100000 lines after the header');
  });

  it('GET /health answers while a hostile CSV is being parsed (the parse yields to the event loop)', async () => {
    const base = await t.app.listen({ port: 0, host: '127.0.0.1' });
    const answeredAt: number[] = [];
    const latencies: number[] = [];
    let done = false;
    const poll = (async () => {
      while (!done) {
        const start = performance.now();
        const h = await fetch(`${base}/health`);
        await h.text();
        answeredAt.push(performance.now());
        latencies.push(performance.now() - start);
        expect(h.status).toBe(200);
      }
    })();
    // 100,000 lines: over a hundred pieces of parsing, then the check of each line.
    const hostile = await fetch(`${base}/api/v4/groups/${g}/planning?format=csv`, {
      method: 'PUT',
      headers: { ...admin.auth, 'content-type': 'text/csv' },
      body: `trip_id;date\r\n${'T;2026-03-16\r\n'.repeat(100_000)}`,
    });
    await hostile.text();
    done = true;
    await poll;
    expect(hostile.status).toBe(422);
    const during = answeredAt.filter((at) => at > planning.started && at < planning.ended);
    console.log(`/health answered ${during.length} times while the hostile CSV was handled (${(planning.ended - planning.started).toFixed(0)} ms); max /health latency ${Math.max(...latencies).toFixed(1)} ms`);
    expect(during.length).toBeGreaterThan(0);
  });

  it('readCsv keeps reading a well-formed file in pieces (quoted line breaks, BOM, empty lines)', async () => {
    const body = `\uFEFFid;name\r\n\r\n${Array.from({ length: 20_000 }, (_, i) => `${i};"stop\r\n${i} 😀"`).join('\r\n')}\r\n`;
    const read = await readCsv(body);
    expect(read.header).toEqual(['id', 'name']);
    expect(read.records).toHaveLength(20_000);
    expect(read.records[0]).toEqual({ line: 3, values: { id: '0', name: 'stop\r\n0 😀' } });
    expect(read.records[19_999]).toEqual({ line: 3 + 2 * 19_999, values: { id: '19999', name: 'stop\r\n19999 😀' } });
  });

  it('body size limits per kind still hold: 413 beyond them', async () => {
    const big = await inject(t, { method: 'POST', url: '/api/v4/login', headers: { 'content-type': 'application/json' }, payload: JSON.stringify({ email: 'x'.repeat(t.ctx.config.bodyLimitBytes) }) });
    expect(big.status).toBe(413);
    const csvBig = await csv(CSV_INPUTS()[1]!.url, 'POST', 'x'.repeat(t.ctx.config.importBodyLimitBytes + 1));
    expect(csvBig.status).toBe(413);
  });
});

describe('item 8: 500s on bad input', () => {
  const deep = (n: number) => '['.repeat(n) + ']'.repeat(n);

  it('deeply nested JSON on /login answers 422 json_invalid, not FST_ERR_FAILED_ERROR_SERIALIZATION', async () => {
    const r = await inject(t, { method: 'POST', url: '/api/v4/login', headers: { 'content-type': 'application/json' }, payload: deep(20_000) });
    expect(r.status).toBe(422);
    expect(r.json.detail).toEqual([{ loc: ['body'], msg: `JSON nested deeper than ${MAX_JSON_DEPTH} levels`, type: 'json_invalid' }]);
    const inString = await inject(t, { method: 'POST', url: '/api/v4/login', headers: { 'content-type': 'application/json' }, payload: JSON.stringify({ email: '['.repeat(100), password: 'x' }) });
    expect(inString.status).not.toBe(500);
    expect(inString.body).not.toContain('json_invalid');
  });

  it('deeply nested JSON answers a 4xx on every JSON endpoint', async () => {
    const doc = (await t.app.inject({ url: '/api/v4/openapi/internal.json' })).json() as { paths: Record<string, Record<string, { requestBody?: { content: Record<string, unknown> } }>> };
    let tried = 0;
    for (const [path, methods] of Object.entries(doc.paths)) {
      for (const [method, o] of Object.entries(methods)) {
        if (!o.requestBody?.content['application/json']) continue;
        const url = path.replace('{group_id}', g).replace(/\{[^}]+\}/g, 'x');
        const r = await inject(t, { method: method.toUpperCase() as 'POST', url, headers: { ...su.auth, 'content-type': 'application/json' }, payload: `{"a":${deep(1000)}}` });
        expect(r.status, `${method} ${path}: ${r.body.slice(0, 200)}`).toBeGreaterThanOrEqual(400);
        expect(r.status, `${method} ${path}: ${r.body.slice(0, 200)}`).toBeLessThan(500);
        tried++;
      }
    }
    expect(tried).toBeGreaterThan(20);
  });

  it('a 422 whose input cannot be written leaves the input out instead of failing (error serialisation cannot fail)', () => {
    let nested: unknown = [];
    for (let i = 0; i < 20_000; i++) nested = [nested];
    const [deepIssue, longIssue] = listedIssues([
      { loc: ['body'], msg: 'deep', type: 'list_type', input: nested },
      { loc: ['body', 'k'.repeat(10_000)], msg: 'm'.repeat(100_000), type: 'string_type', input: 'v'.repeat(1_000_000) },
    ]);
    expect(deepIssue).toEqual({ loc: ['body'], msg: 'deep', type: 'list_type' });
    expect(JSON.stringify(longIssue).length).toBeLessThan(2000);
    expect(longIssue!.input).toContain('(1000000 characters)');
  });

  it('a trip read dated year 0000 answers 422 naming query.date, not 500', async () => {
    const r = await inject(t, { url: `/api/v4/groups/${g}/trips/T1?date=0000-01-01`, headers: reader.auth });
    expect(r.status).toBe(422);
    expect(r.json.detail[0]).toMatchObject({ loc: ['query', 'date'], input: '0000-01-01' });
    expect(r.json.detail[0].msg).toContain('years 1900 to 2999');
  });

  it('sms-count for the period 0000-01 answers 422 naming query.period, not 500', async () => {
    const r = await inject(t, { url: `/api/v4/groups/${g}/notifications/sms-count?period=0000-01`, headers: reader.auth });
    expect(r.status).toBe(422);
    expect(r.json.detail).toEqual([expect.objectContaining({ loc: ['query', 'period'], input: '0000-01' })]);
  });

  it('a device item dated year 0000 is rejected alone, and the rest of its batch is stored', async () => {
    const dev = await newDevice(t, g);
    const good = item('position', '2026-03-10T08:00:00+01:00', { lat: 45.7, lon: 4.8, gps_valid: true });
    const badAt = item('position', '0000-01-01T00:00:00Z', { lat: 45.7, lon: 4.8, gps_valid: true });
    const badDate = item('trip_start', '2026-03-10T08:01:00+01:00', { trip_id: 'T1', service_date: '0000-01-01' });
    const zoneSuffix = item('position', '2026-03-10T08:02:00Z[Europe/Paris]', { lat: 45.7, lon: 4.8, gps_valid: true });
    const r = await send(t, g, dev.auth, [badAt, good, badDate, zoneSuffix]);
    expect(r.status).toBe(200);
    expect(r.json.accepted).toEqual([good.id]);
    expect(r.json.rejected.map((x: any) => [x.id, x.errors[0].loc])).toEqual([[badAt.id, ['at']], [badDate.id, ['service_date']], [zoneSuffix.id, ['at']]]);
    expect(r.json.rejected[0].errors[0].msg).toContain('years 1900 to 2999');
  });

  it('a NUL byte inside a GTFS file answers 422 naming the file, line and field, not 500', async () => {
    const r = await uploadZip(t, g, admin, minimalZip({ 'stops.txt': 'stop_id,stop_name,stop_lat,stop_lon\nS1,First,48.85,2.35\nS2,Sec\u0000ond,48.86,2.36\nS3,Third,48.87,2.37\n' }));
    expect(r.status).toBe(422);
    expect(r.json.errors).toContainEqual(expect.objectContaining({ file: 'stops.txt', line: 3, field: 'stop_name', code: 'bad_value' }));
  });

  it('a GTFS file with a 10 MB line or a header of 5,000 columns answers 422 naming the file, not 500', async () => {
    // Random text: a repeated letter would be refused as a zip bomb (compression ratio) first.
    const long = await uploadZip(t, g, admin, minimalZip({ 'stops.txt': `stop_id,stop_name,stop_lat,stop_lon\nS1,${randomBytes(7_500_000).toString('base64')},48.85,2.35\n` }));
    expect(long.status).toBe(422);
    expect(long.json.errors).toContainEqual(expect.objectContaining({ file: 'stops.txt', code: 'csv_syntax' }));
    const wide = await uploadZip(t, g, admin, minimalZip({ 'stops.txt': `stop_id,stop_name,stop_lat,stop_lon${',x'.repeat(5000)}\nS1,First,48.85,2.35\n` }));
    expect(wide.status).toBe(422);
    expect(wide.json.errors).toContainEqual(expect.objectContaining({ file: 'stops.txt', line: 1, code: 'csv_syntax', message: `the header has 5004 columns; a line holds at most ${MAX_CSV_COLUMNS}` }));
  });

  it('every date and time parameter of the API answers 422 naming it for year 0000, year 10000, Feb 30 and huge UNIX seconds', async () => {
    const doc = (await t.app.inject({ url: '/api/v4/openapi/internal.json' })).json() as {
      paths: Record<string, Record<string, { parameters?: { name: string; in: string; schema: Record<string, unknown> }[] }>>;
    };
    const hostile: Record<string, string[]> = {
      date: ['0000-01-01', '10000-01-01', '2026-02-30'],
      yyyymmdd: ['00000101', '100000101', '20260230'],
      'date-either': ['0000-01-01', '00000101', '2026-02-30', '20260230'],
      'year-month': ['0000-01', '10000-01'],
      'date-time': ['0000-01-01T00:00:00Z', '10000-01-01T00:00:00Z', '2026-02-30T00:00:00Z'],
      unix: ['99999999999999', String(MAX_UNIX_SECONDS + 1), '1e300'],
    };
    const kinds = new Set<string>();
    for (const [path, methods] of Object.entries(doc.paths)) {
      for (const [method, o] of Object.entries(methods)) {
        for (const p of o.parameters ?? []) {
          if (p.in !== 'query' && p.in !== 'path') continue;
          const kind = typeof p.schema['format'] === 'string' && hostile[p.schema['format'] as string] ? (p.schema['format'] as string) : p.schema['maximum'] === MAX_UNIX_SECONDS ? 'unix' : null;
          if (!kind) continue;
          kinds.add(kind);
          for (const v of hostile[kind]!) {
            const url = path.replace('{group_id}', g).replace(`{${p.name}}`, encodeURIComponent(v)).replace(/\{[^}]+\}/g, 'x');
            const r = await inject(t, { method: method.toUpperCase() as 'GET', url: p.in === 'query' ? `${url}?${p.name}=${encodeURIComponent(v)}` : url, headers: su.auth });
            const where = `${method} ${path} ${p.name}=${v}: ${r.status} ${r.body.slice(0, 200)}`;
            expect(r.status, where).toBe(422);
            expect((r.json.detail as { loc: unknown[] }[]).map((d) => d.loc), where).toContainEqual([p.in === 'query' ? 'query' : 'path', p.name]);
          }
        }
      }
    }
    expect([...kinds].sort()).toEqual(['date', 'date-either', 'unix', 'year-month', 'yyyymmdd']);
  });
});
