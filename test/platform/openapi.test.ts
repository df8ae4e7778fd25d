import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SPEC_ENDPOINTS } from '../spec-endpoints.js';
import { inject, setup, type TestApp } from '../helpers/app.js';

let t: TestApp;
beforeAll(async () => {
  t = await setup();
});
afterAll(async () => t?.close());

type Doc = { openapi: string; paths: Record<string, Record<string, any>>; info: { title: string } };
const doc = async (version: string, name: string): Promise<Doc> => {
  const r = await inject(t, { url: `/api/${version}/openapi/${name}.json` });
  expect(r.status).toBe(200);
  return r.json;
};
const operations = (d: Doc) => Object.entries(d.paths).flatMap(([p, ms]) => Object.keys(ms).map((m) => `${m.toUpperCase()} ${p}`));

describe('OpenAPI documents', () => {
  it('the internal v4 document lists every method and path of the spec, both vehicle-movement spellings included', async () => {
    const ops = new Set(operations(await doc('v4', 'internal')));
    const missing = SPEC_ENDPOINTS.map(([m, p]) => `${m} ${p}`).filter((o) => !ops.has(o));
    expect(missing).toEqual([]);
    expect(ops.has('GET /api/v4/groups/{group_id}/vehicle-movements')).toBe(true);
    expect(ops.has('GET /api/v4/groups/{group_id}/vehicle_movements')).toBe(true);
  });

  it('the datahub document lists exactly the three exports', async () => {
    const ops = operations(await doc('v4', 'datahub')).sort();
    expect(ops).toEqual([
      'GET /api/v4/groups/{group_id}/export/drivers',
      'GET /api/v4/groups/{group_id}/export/trips',
      'GET /api/v4/groups/{group_id}/export/vehicles',
    ]);
  });

  it('the public document is a strict subset of the internal one, without provisioning', async () => {
    const internal = new Set(operations(await doc('v4', 'internal')));
    const pub = operations(await doc('v4', 'public'));
    expect(pub.length).toBeGreaterThan(20);
    expect(pub.filter((o) => !internal.has(o))).toEqual([]);
    expect(pub).not.toContain('POST /api/v4/groups');
    expect(pub.length).toBeLessThan(internal.size);
  });

  it('each version serves its documents with its own prefix', async () => {
    for (const v of ['v2', 'v3', 'v5']) {
      const d = await doc(v, 'internal');
      const paths = Object.keys(d.paths);
      expect(paths.filter((p) => p.startsWith('/api/') && !p.startsWith(`/api/${v}/`))).toEqual([]);
      expect(paths).toContain(`/api/${v}/groups/{group_id}/trips/{trip_id}`);
    }
    expect((await inject(t, { url: '/api/v6/openapi/internal.json' })).status).toBe(422);
  });

  it('flags the deprecated trips list and tags the stats endpoints', async () => {
    const d = await doc('v4', 'internal');
    expect(d.paths['/api/v4/groups/{group_id}/trips']!['get'].deprecated).toBe(true);
    expect(d.paths['/api/v4/groups/{group_id}/trips/{trip_id}']!['get'].deprecated).toBeUndefined();
    expect(d.paths['/api/v4/groups/{group_id}/stats/trip-tracking']!['get'].tags).toContain('stats');
  });

  it('documents the exact parameter formats and the 422 HTTPValidationError answer', async () => {
    const d = await doc('v4', 'internal');
    const param = (path: string, name: string) => d.paths[path]!['get'].parameters.find((p: any) => p.name === name);
    expect(param('/api/v4/groups/{group_id}/trips', 'date').schema.pattern).toBe('^[0-9]{8}$');
    expect(param('/api/v4/groups/{group_id}/trips/{trip_id}', 'date').schema.format).toBe('date');
    expect(param('/api/v4/groups/{group_id}/notifications/sms-count', 'period').schema.pattern).toBe('^[0-9]{4}-(0[1-9]|1[0-2])$');
    expect(param('/api/v4/groups/{group_id}/drivers/{driver_id}', 'driver_id').schema.pattern).toBe('^[0-9a-fA-F]{24}$');
    expect(param('/api/v4/groups/{group_id}/devices/{device_id}/history', 'at').schema.type).toBe('integer');
    expect(param('/api/v4/groups/{group_id}/vehicles', 'statuses').schema.uniqueItems).toBe(true);
    expect(param('/api/v4/groups/{group_id}/drivers', 'archived').schema.default).toBe(false);
    const r422 = d.paths['/api/v4/groups/{group_id}/trips']!['get'].responses['422'];
    expect(r422.content['application/json'].schema).toEqual({ $ref: '#/components/schemas/HTTPValidationError' });
    expect((d as any).components.schemas.HTTPValidationError.properties.detail.type).toBe('array');
  });

  it('declares the allowed roles and error names of each group endpoint', async () => {
    const d = await doc('v4', 'internal');
    const op = d.paths['/api/v4/groups/{group_id}/notifications/sms-count']!['get'];
    expect(op['x-roles']).toEqual(['operator', 'external_reader', 'limited_reader', 'regulator', 'reader']);
    expect(op.responses['403'].description).toContain('NoRole');
    expect(op.responses['404'].description).toContain('GroupNotFound');
    expect(op.responses['401'].description).toContain('Unauthenticated');
    expect(d.paths['/api/v4/groups/{group_id}/vehicle-amount']!['get'].responses['403'].description).toContain('InvalidRole');
  });

  it('serves the interactive reference page', async () => {
    const r = await inject(t, { url: '/docs/' });
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toContain('text/html');
    expect(r.body).toContain('swagger');
  });
});
