/** GTFS versions, publication, and the public calendar endpoints. */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixedClock } from '../../src/platform/clock.js';
import { inject, newGroup, newUser, setup, type TestApp, type TestUser } from '../helpers/app.js';
import { minimalZip, publish, uploadZip } from '../helpers/gtfs.js';

const clock = fixedClock('2026-03-01T08:00:00Z');
let t: TestApp;
beforeAll(async () => {
  t = await setup({ clock });
});
afterAll(async () => t?.close());

const SAMPLE_ZIP = readFileSync(createRequire(import.meta.url).resolve('sample-gtfs-feed/gtfs.zip'));

describe('versions and publication', () => {
  let g: string;
  let admin: TestUser;
  let reader: TestUser;
  const ids: string[] = [];
  beforeAll(async () => {
    g = await newGroup(t);
    admin = await newUser(t, { groupId: g, role: 'admin' });
    reader = await newUser(t, { groupId: g, role: 'reader' });
    for (const name of ['winter', 'spring']) {
      clock.advance(60_000);
      const r = await uploadZip(t, g, admin, minimalZip(), `?name=${name}`);
      expect(r.status).toBe(201);
      ids.push(r.json.gtfs_id);
    }
  });

  const list = async () => (await inject(t, { url: `/api/v4/groups/${g}/gtfs`, headers: reader.auth })).json.map((v: any) => [v.name, v.status, v.publication_date]);

  it('are listed, latest import first, as imported until published', async () => {
    expect(await list()).toEqual([['spring', 'imported', null], ['winter', 'imported', null]]);
  });

  it('publication makes a version the published one; the previous one is superseded but stays readable', async () => {
    clock.set('2026-03-02T09:00:00Z');
    const first = await publish(t, g, admin, ids[0]!);
    expect(first.status).toBe(200);
    expect(first.json).toMatchObject({ id: ids[0], status: 'published', publication_date: '2026-03-02T09:00:00.000Z' });
    clock.set('2026-03-05T09:00:00Z');
    await publish(t, g, admin, ids[1]!);
    expect(await list()).toEqual([['spring', 'published', '2026-03-05T09:00:00.000Z'], ['winter', 'superseded', '2026-03-02T09:00:00.000Z']]);
    const one = await inject(t, { url: `/api/v4/groups/${g}/gtfs/${ids[0]}`, headers: reader.auth });
    expect(one.json).toMatchObject({ name: 'winter', status: 'superseded', counts: { stop_times: 3 } });
    const rows = await t.db.query<{ gtfs_id: string }>('SELECT gtfs_id FROM gtfs_publications WHERE group_id = $1 ORDER BY published_at', [g]);
    expect(rows.map((r) => r.gtfs_id)).toEqual(ids);
  });

  it('publishing the published version again adds nothing; an unknown version is 404 GtfsNotFound', async () => {
    clock.set('2026-03-06T09:00:00Z');
    const again = await publish(t, g, admin, ids[1]!);
    expect(again.json.publication_date).toBe('2026-03-05T09:00:00.000Z');
    expect(await t.db.query('SELECT count(*)::int AS n FROM gtfs_publications WHERE group_id = $1', [g])).toEqual([{ n: 2 }]);
    const missing = await publish(t, g, admin, 'f'.repeat(24));
    expect(missing.status).toBe(404);
    expect(missing.json.code).toBe('GtfsNotFound');
    expect((await inject(t, { url: `/api/v4/groups/${g}/gtfs/nope`, headers: reader.auth })).json.code).toBe('GtfsNotFound');
  });

  it('only an admin imports and publishes', async () => {
    const refused = await uploadZip(t, g, reader, minimalZip());
    expect(refused.status).toBe(403);
    expect(refused.json.code).toBe('ImportGtfsRoleRequired');
    expect((await publish(t, g, reader, ids[0]!)).json.code).toBe('PublishGtfsRoleRequired');
  });

  it('another group never sees the versions', async () => {
    const other = await newGroup(t);
    const otherAdmin = await newUser(t, { groupId: other, role: 'admin' });
    expect((await inject(t, { url: `/api/v4/groups/${other}/gtfs`, headers: otherAdmin.auth })).json).toEqual([]);
    expect((await publish(t, other, otherAdmin, ids[0]!)).status).toBe(404);
  });
});

describe('calendars (no credential)', () => {
  let g: string;
  let gtfsId: string;
  beforeAll(async () => {
    g = await newGroup(t, { timezone: 'Europe/Berlin' });
    const admin = await newUser(t, { groupId: g, role: 'admin' });
    gtfsId = (await uploadZip(t, g, admin, SAMPLE_ZIP)).json.gtfs_id;
    await publish(t, g, admin, gtfsId);
  });

  it('lists every service with weekdays, range, exceptions and the dates it runs on', async () => {
    const r = await inject(t, { url: `/api/v4/groups/${g}/gtfs/${gtfsId}/calendars` });
    expect(r.status).toBe(200);
    expect(r.json.map((c: any) => c.service_id)).toEqual(['all-day', 'during-dst', 'on-weekends', 'on-working-days']);
    const weekends = r.json.find((c: any) => c.service_id === 'on-weekends');
    expect(weekends).toMatchObject({
      monday: false, friday: false, saturday: true, sunday: true, start_date: '2019-03-03', end_date: '2019-08-10',
      added_dates: ['2019-06-15'], removed_dates: ['2019-07-20', '2019-07-21'],
    });
    // By hand: 23 Saturdays (03-09 … 08-10) and 23 Sundays (03-03 … 08-04), minus 07-20 and 07-21.
    expect(weekends.dates).toHaveLength(44);
    expect(weekends.dates[0]).toBe('2019-03-03');
    expect(weekends.dates.at(-1)).toBe('2019-08-10');
    expect(weekends.dates).toContain('2019-06-15');
    expect(weekends.dates).not.toContain('2019-07-20');
    expect(r.json.find((c: any) => c.service_id === 'during-dst').dates).toEqual(['2019-03-30']);
  });

  it('a service defined by calendar_dates only has no weekday and no range', async () => {
    const g2 = await newGroup(t);
    const admin = await newUser(t, { groupId: g2, role: 'admin' });
    const v = await uploadZip(t, g2, admin, minimalZip({ 'calendar.txt': null, 'calendar_dates.txt': 'service_id,date,exception_type\nWK,20260302,1\nWK,20260301,1\n' }));
    const r = await inject(t, { url: `/api/v4/groups/${g2}/gtfs/${v.json.gtfs_id}/calendars/WK` });
    expect(r.json).toEqual({
      service_id: 'WK', monday: false, tuesday: false, wednesday: false, thursday: false, friday: false, saturday: false, sunday: false,
      start_date: null, end_date: null, added_dates: ['2026-03-01', '2026-03-02'], removed_dates: [], dates: ['2026-03-01', '2026-03-02'],
    });
  });

  it('one calendar; null for an unknown service of a known version; `published` reads the published version', async () => {
    const one = await inject(t, { url: `/api/v4/groups/${g}/gtfs/${gtfsId}/calendars/during-dst` });
    expect(one.json).toMatchObject({ service_id: 'during-dst', saturday: true, dates: ['2019-03-30'] });
    const none = await inject(t, { url: `/api/v4/groups/${g}/gtfs/${gtfsId}/calendars/no-such-service` });
    expect(none.status).toBe(200);
    expect(none.json).toBeNull();
    const alias = await inject(t, { url: `/api/v4/groups/${g}/gtfs/published/calendars/during-dst` });
    expect(alias.json).toEqual(one.json);
  });

  it('an unknown gtfs_id: 422 InvalidGTFSId on the list, 404 GtfsCalendarNotFound on one calendar; unknown group 404', async () => {
    const list = await inject(t, { url: `/api/v4/groups/${g}/gtfs/${'0'.repeat(24)}/calendars` });
    expect(list.status).toBe(422);
    expect(list.json).toMatchObject({ code: 'InvalidGTFSId' });
    expect(typeof list.json.detail).toBe('string');
    const one = await inject(t, { url: `/api/v4/groups/${g}/gtfs/${'0'.repeat(24)}/calendars/all-day` });
    expect(one.status).toBe(404);
    expect(one.json.code).toBe('GtfsCalendarNotFound');
    const otherGroup = await newGroup(t);
    expect((await inject(t, { url: `/api/v4/groups/${otherGroup}/gtfs/${gtfsId}/calendars` })).json.code).toBe('InvalidGTFSId');
    expect((await inject(t, { url: `/api/v4/groups/ghost/gtfs/${gtfsId}/calendars` })).json.code).toBe('GroupNotFound');
    const unpublished = await newGroup(t);
    expect((await inject(t, { url: `/api/v4/groups/${unpublished}/gtfs/published/calendars` })).json.code).toBe('InvalidGTFSId');
  });
});
