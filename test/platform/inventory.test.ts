/**
 * Inventory: the routes the server registers and the operations of the internal document are the
 * same set. Nothing is served undocumented, nothing documented is missing. The only routes left
 * out of the document are the infrastructure ones listed here (probes, metrics, the documents and
 * the reference page themselves, the static pages).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setup, type TestApp } from '../helpers/app.js';

let t: TestApp;
beforeAll(async () => {
  t = await setup();
});
afterAll(async () => t?.close());

/** Undocumented on purpose: not part of the API surface. */
const INFRASTRUCTURE = [/^\/health$/, /^\/ready$/, /^\/metrics$/, /^\/api\/:version\/openapi\/:document$/, /^\/docs(\/|$)/, /^\/live(\/|$)/, /^\/console(\/|$)/];

/** Fastify's `:param` (and `*`) spelled as OpenAPI's `{param}`. */
const asOpenApi = (url: string) => url.replace(/:([A-Za-z0-9_]+)/g, '{$1}');

describe('inventory', () => {
  it('every registered route is an operation of the internal document, and every operation is served', async () => {
    const served = new Set<string>();
    const infrastructure: string[] = [];
    for (const r of t.app.routeTable) {
      if (r.method === 'HEAD' || r.method === 'OPTIONS') continue;
      if (INFRASTRUCTURE.some((re) => re.test(r.url))) {
        infrastructure.push(`${r.method} ${r.url}`);
        continue;
      }
      served.add(`${r.method} ${asOpenApi(r.url)}`);
    }
    const doc = (await t.app.inject({ url: '/api/v4/openapi/internal.json' })).json() as { paths: Record<string, Record<string, unknown>> };
    const documented = new Set(Object.entries(doc.paths).flatMap(([p, ms]) => Object.keys(ms).map((m) => `${m.toUpperCase()} ${p}`)));

    expect([...served].filter((o) => !documented.has(o)).sort(), 'served but undocumented').toEqual([]);
    expect([...documented].filter((o) => !served.has(o)).sort(), 'documented but not served').toEqual([]);
    // The comparison is not vacuous: the API is large, and the probes are there.
    expect(served.size).toBeGreaterThan(80);
    expect(infrastructure).toContain('GET /health');
  });

  it('no infrastructure route is mistaken for an API one: each is hidden from every document', async () => {
    for (const name of ['public', 'datahub', 'internal']) {
      const doc = (await t.app.inject({ url: `/api/v4/openapi/${name}.json` })).json() as { paths: Record<string, unknown> };
      for (const p of Object.keys(doc.paths)) expect(INFRASTRUCTURE.some((re) => re.test(p)), p).toBe(false);
    }
  });
});
