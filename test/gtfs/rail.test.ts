/** The rail-station referential (no group, no credential) and the links of network stops to it. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { importStations } from '../../src/domains/gtfs/rail/service.js';
import { ValidationError } from '../../src/platform/http/errors.js';
import { inject, newGroup, newUser, setup, type TestApp, type TestUser } from '../helpers/app.js';
import { minimalZip, publish, uploadZip } from '../helpers/gtfs.js';

let t: TestApp;
beforeAll(async () => {
  t = await setup();
  // The open-data layout (trainline-eu stations): id;name;uic;latitude;longitude;country.
  await importStations(t.ctx, [
    'id;name;uic;latitude;longitude;country',
    'FRLYD;Lyon Part-Dieu;8772319;45.7606;4.8596;FR',
    'FRLPR;Lyon Perrache;8772300;45.7485;4.8257;FR',
    'FRPLY;Paris Gare de Lyon;8768600;48.8443;2.3744;FR',
    'CHGVA;Genève;8501008;46.2102;6.1424;CH',
    'FRLYS;Lyon Saint-Exupéry TGV;8776290;45.7206;5.0757;FR',
  ].join('\n'));
});
afterAll(async () => t?.close());

describe('the referential', () => {
  it('is imported from CSV (insert or update), all or nothing, every bad line named', async () => {
    await importStations(t.ctx, 'station_id;name;code;lat;lon;country\nCHGVA;Genève Cornavin;8501008;46,2102;6.1424;CH\n');
    expect(await t.db.query("SELECT name, lat FROM rail_stations WHERE station_id = 'CHGVA'")).toEqual([{ name: 'Genève Cornavin', lat: 46.2102 }]);
    let err: unknown;
    try {
      await importStations(t.ctx, 'station_id;name;lat\nX1;Somewhere;91\n;Nameless;1\nX1;Again;1\n');
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ValidationError);
    expect((err as ValidationError).issues.map((i) => i.loc)).toEqual([['file', 2, 'lat'], ['file', 3, 'station_id'], ['file', 4, 'station_id']]);
    expect(await t.db.query("SELECT 1 FROM rail_stations WHERE station_id = 'X1'")).toEqual([]);
    await expect(importStations(t.ctx, 'code;label\n1;x\n')).rejects.toThrow(/station_id \(or id\) and name/);
  });

  it('is listed by name and searched by part of the name or by code, without credential', async () => {
    const all = await inject(t, { url: '/api/v4/rail-stations' });
    expect(all.status).toBe(200);
    expect(all.json.map((s: any) => s.name)).toEqual(['Genève Cornavin', 'Lyon Part-Dieu', 'Lyon Perrache', 'Lyon Saint-Exupéry TGV', 'Paris Gare de Lyon']);
    expect(all.json[1]).toEqual({ station_id: 'FRLYD', name: 'Lyon Part-Dieu', code: '8772319', country: 'FR', lat: 45.7606, lon: 4.8596 });
    const lyon = await inject(t, { url: '/api/v4/rail-stations?q=LYON' });
    expect(lyon.json.map((s: any) => s.station_id)).toEqual(['FRLYD', 'FRLPR', 'FRLYS', 'FRPLY']);
    const byCode = await inject(t, { url: '/api/v4/rail-stations?q=8772300' });
    expect(byCode.json.map((s: any) => s.station_id)).toEqual(['FRLPR']);
    // LIKE wildcards are searched as text.
    expect((await inject(t, { url: '/api/v4/rail-stations?q=%25' })).json).toEqual([]);
  });

  it('pages with limit and a cursor in the Link header', async () => {
    const seen: string[] = [];
    let url: string | undefined = '/api/v4/rail-stations?q=lyon&limit=3';
    while (url) {
      const r = await inject(t, { url });
      seen.push(...r.json.map((s: any) => s.station_id));
      url = /<([^>]+)>; rel="next"/.exec(String(r.headers['link'] ?? ''))?.[1];
    }
    expect(seen).toEqual(['FRLYD', 'FRLPR', 'FRLYS', 'FRPLY']);
    const bad = await inject(t, { url: '/api/v4/rail-stations?cursor=nonsense' });
    expect(bad.status).toBe(422);
    expect(bad.json.detail[0].loc).toEqual(['query', 'cursor']);
  });

  it('gives one station, or 404 RailStationNotFound', async () => {
    expect((await inject(t, { url: '/api/v4/rail-stations/FRPLY' })).json.name).toBe('Paris Gare de Lyon');
    const none = await inject(t, { url: '/api/v4/rail-stations/NOPE' });
    expect(none.status).toBe(404);
    expect(none.json.code).toBe('RailStationNotFound');
  });
});

describe('station links of a group', () => {
  let g: string;
  let admin: TestUser;
  let reader: TestUser;
  beforeAll(async () => {
    g = await newGroup(t, { features: ['rail_data'] });
    admin = await newUser(t, { groupId: g, role: 'admin' });
    reader = await newUser(t, { groupId: g, role: 'reader' });
  });
  const link = (stop_id: string, station_id: string) => inject(t, { method: 'POST', url: `/api/v4/groups/${g}/rail/station-links`, headers: admin.auth, payload: { stop_id, station_id } });
  const links = async () => (await inject(t, { url: `/api/v4/groups/${g}/rail/station-links`, headers: reader.auth })).json.map((l: any) => [l.stop_id, l.station_id, l.stop_name, l.is_orphan]);

  it('flags is_orphan against the published GTFS, and recomputes it at each publication', async () => {
    // Nothing published: every link is an orphan.
    const first = await link('S1', 'FRLYD');
    expect(first.status, first.body).toBe(201);
    expect(first.json).toMatchObject({ stop_id: 'S1', station_id: 'FRLYD', is_orphan: true, stop_name: null, station: { name: 'Lyon Part-Dieu' } });

    const v1 = await uploadZip(t, g, admin, minimalZip());
    await publish(t, g, admin, v1.json.gtfs_id);
    expect(await links()).toEqual([['S1', 'FRLYD', 'First', false]]);
    await link('S3', 'FRLPR');
    await link('S9', 'FRLPR');
    expect(await links()).toEqual([['S1', 'FRLYD', 'First', false], ['S3', 'FRLPR', 'Third', false], ['S9', 'FRLPR', null, true]]);

    // A new version without S1: its link becomes an orphan once that version is published, not before.
    const v2 = await uploadZip(t, g, admin, minimalZip({
      'stops.txt': 'stop_id,stop_name,stop_lat,stop_lon\nS2,Second,48.86,2.36\nS3,Third,48.87,2.37\nS9,Ninth,48.9,2.4\n',
      'stop_times.txt': 'trip_id,arrival_time,departure_time,stop_id,stop_sequence\nT1,08:00:00,08:00:00,S2,1\nT1,08:20:00,08:20:00,S3,2\n',
    }));
    expect((await links())[0]).toEqual(['S1', 'FRLYD', 'First', false]);
    await publish(t, g, admin, v2.json.gtfs_id);
    expect(await links()).toEqual([['S1', 'FRLYD', null, true], ['S3', 'FRLPR', 'Third', false], ['S9', 'FRLPR', 'Ninth', false]]);
    const stored = await t.db.query<{ stop_id: string; is_orphan: boolean }>('SELECT stop_id, is_orphan FROM rail_station_links WHERE group_id = $1 ORDER BY stop_id', [g]);
    expect(stored.map((r) => [r.stop_id, r.is_orphan])).toEqual([['S1', true], ['S3', false], ['S9', false]]);
  });

  it('refuses an unknown station and a link made twice; removes a link', async () => {
    const unknown = await link('S2', 'NOPE');
    expect(unknown.status).toBe(422);
    expect(unknown.json.detail[0].loc).toEqual(['body', 'station_id']);
    expect((await link('S3', 'FRLPR')).json.code).toBe('RailStationLinkExists');
    const del = await inject(t, { method: 'DELETE', url: `/api/v4/groups/${g}/rail/station-links/S9/FRLPR`, headers: admin.auth });
    expect(del.status).toBe(204);
    expect((await inject(t, { method: 'DELETE', url: `/api/v4/groups/${g}/rail/station-links/S9/FRLPR`, headers: admin.auth })).json.code).toBe('RailStationLinkNotFound');
    expect((await links()).map((l: any[]) => l[0])).toEqual(['S1', 'S3']);
  });

  it('need the rail_data feature; another group sees none of them', async () => {
    const plain = await newGroup(t, { features: [] });
    const plainAdmin = await newUser(t, { groupId: plain, role: 'admin' });
    const r = await inject(t, { url: `/api/v4/groups/${plain}/rail/station-links`, headers: plainAdmin.auth });
    expect(r.status).toBe(403);
    expect(r.json.code).toBe('FeatureNotEnabled');
    const other = await newGroup(t, { features: ['rail_data'] });
    const otherReader = await newUser(t, { groupId: other, role: 'reader' });
    expect((await inject(t, { url: `/api/v4/groups/${other}/rail/station-links`, headers: otherReader.auth })).json).toEqual([]);
  });
});
