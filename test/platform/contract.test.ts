/**
 * The contract (issue #18 §1): every record a named component of the documents, the device items
 * documented as a discriminated union, and answers checked against their schemas.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Type } from 'typebox';
import { inject, setup, type TestApp } from '../helpers/app.js';
import { takeMismatches } from '../helpers/response-check.js';

type Schema = Record<string, any>;
type Doc = { paths: Record<string, Record<string, Schema>>; components: { schemas: Record<string, Schema> } };

let t: TestApp;
let internal: Doc;
beforeAll(async () => {
  // Every response serializer built at start, as the service builds them: a schema that
  // fast-json-stringify refuses fails here, not on some route's first answer.
  t = await setup({
    serializers: 'eager',
    checkResponses: true,
    extraRoutes: (app) => {
      const schema = { response: { 200: Type.Object({ a: Type.String() }, { additionalProperties: false }) } };
      app.get('/probe/good', { schema }, async () => ({ a: 'x' }));
      app.get('/probe/wrong-type', { schema }, async () => ({ a: 1 }) as never);
      app.get('/probe/extra', { schema }, async () => ({ a: 'x', b: 2 }) as never);
      app.get('/probe/status', { schema }, async (_req, reply) => reply.status(201 as 200).send({ a: 'x' }));
      // A JSON answer the handler writes itself (as the feeds' ?format=json), checked as sent.
      app.get('/probe/written', { schema }, async (_req, reply) => reply.type('application/json').send(Buffer.from('{"a":"x","b":2}') as never));
    },
  });
  internal = (await inject(t, { url: '/api/v4/openapi/internal.json' })).json;
});
afterAll(async () => t?.close());

const isNamed = (s: Schema | undefined): boolean => {
  if (!s) return true;
  if (typeof s['$ref'] === 'string') return true;
  if (s['type'] === 'array') return isNamed(s['items']);
  if (Array.isArray(s['anyOf'])) return s['anyOf'].every((b: Schema) => b['type'] === 'null' || isNamed(b));
  return false;
};

function inlineBodies(doc: Doc): string[] {
  const found: string[] = [];
  for (const [path, methods] of Object.entries(doc.paths)) {
    for (const [method, operation] of Object.entries(methods)) {
      const bodies: (Schema | undefined)[] = [operation['requestBody']?.content?.['application/json']?.schema];
      for (const [status, r] of Object.entries(operation['responses'] ?? {})) {
        if (status.startsWith('2')) bodies.push((r as Schema)['content']?.['application/json']?.schema);
      }
      if (!bodies.every(isNamed)) found.push(`${method.toUpperCase()} ${path}`);
    }
  }
  return found.sort();
}

describe('the contract', () => {
  it('records an answer its documented schema does not describe: a wrong type, an undocumented field, an undocumented status, a JSON text the handler wrote', async () => {
    takeMismatches();
    for (const p of ['good', 'wrong-type', 'extra', 'status', 'written']) expect((await inject(t, { url: `/probe/${p}` })).status).toBeLessThan(300);
    const found = takeMismatches();
    expect(found.map((m) => m.request)).toEqual(['GET /probe/wrong-type', 'GET /probe/extra', 'GET /probe/status', 'GET /probe/written']);
    expect(found[0]!.errors.join()).toContain('/a must be string');
    expect(found[1]!.errors.join()).toContain('additionalProperty');
    expect(found[2]!.errors.join()).toContain('status 201 is not documented');
    expect(found[3]!.errors.join()).toContain('additionalProperty');
  });

  it('documents the device items as a union told apart by type, each item closed with its fields', () => {
    const s = internal.components.schemas;
    const body = internal.paths['/api/v4/groups/{group_id}/device/reports']!['post']!['requestBody'].content['application/json'].schema;
    expect(body).toEqual({ $ref: '#/components/schemas/DeviceReportBatch' });
    expect(s['DeviceReportBatch']!['properties'].items.items).toEqual({ $ref: '#/components/schemas/DeviceReportItem' });
    const union = s['DeviceReportItem']!;
    const types = ['sign_on', 'sign_off', 'trip_start', 'trip_end', 'trip_event', 'position', 'passenger_count', 'device_state', 'vehicle_movement'];
    expect(Object.keys(union['discriminator'].mapping)).toEqual(types);
    expect(union['discriminator'].propertyName).toBe('type');
    expect(union['oneOf'].map((b: Schema) => b['$ref'])).toEqual(Object.values(union['discriminator'].mapping));
    for (const type of types) {
      const item = s[union['discriminator'].mapping[type].split('/').pop()]!;
      expect(item['additionalProperties'], type).toBe(false);
      expect(item['properties'].type, type).toMatchObject({ enum: [type] });
      expect(item['required'], type).toEqual(expect.arrayContaining(['id', 'type', 'at']));
    }
    expect(s['PositionItem']!['properties']).toMatchObject({ lat: { minimum: -90, maximum: 90 }, lon: { minimum: -180, maximum: 180 }, speed_kmh: { minimum: 0 } });
    expect(s['TripEventItem']!['properties'].event.enum).toEqual(['stop_passed', 'departure', 'arrival', 'state_change']);
  });

  it('names the JSON bodies of every operation as components (or arrays of them)', () => {
    expect(inlineBodies(internal)).toEqual([]);
  });

  it('documents the GTFS-Realtime JSON form after the official proto: one closed record per message, enums by name', () => {
    const s = internal.components.schemas;
    const json = internal.paths['/api/v4/groups/{group_id}/gtfs-rt/trip-updates']!['get']!['responses']['200'].content['application/json'].schema;
    expect(json).toEqual({ $ref: '#/components/schemas/GtfsRtFeedMessage' });
    for (const m of ['GtfsRtFeedMessage', 'GtfsRtFeedEntity', 'GtfsRtTripUpdate', 'GtfsRtVehiclePosition', 'GtfsRtAlert', 'GtfsRtTripModifications', 'GtfsRtShape', 'GtfsRtStop']) {
      expect(s[m]!['additionalProperties'], m).toBe(false);
    }
    expect(s['GtfsRtFeedEntity']!['properties'].tripUpdate.allOf).toEqual([{ $ref: '#/components/schemas/GtfsRtTripUpdate' }]);
    expect(s['GtfsRtFeedHeader']!['required']).toEqual(['gtfsRealtimeVersion']);
    expect(s['GtfsRtTripDescriptor']!['properties'].scheduleRelationship.enum).toContain('CANCELED');
  });

  it('documents in each document only the components its operations use', async () => {
    const datahub: Doc = (await inject(t, { url: '/api/v4/openapi/datahub.json' })).json;
    expect(Object.keys(datahub.components.schemas).sort()).toEqual(['Error', 'HTTPValidationError']);
    expect(Object.keys(internal.components.schemas)).toContain('DeviceReportItem');
  });
});
