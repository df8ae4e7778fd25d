import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixedClock } from '../../src/platform/clock.js';
import { inject, newGroup, newTeam, newUser, setup, type TestApp, type TestUser } from '../helpers/app.js';
import { newDriver } from '../helpers/fleet.js';

const clock = fixedClock('2026-03-10T08:00:00Z');
let t: TestApp;
beforeAll(async () => {
  t = await setup({ clock });
});
afterAll(async () => t?.close());

/** A group with two drivers in two teams, each with a driver account linked to their record. */
async function ratingGroup() {
  const g = await newGroup(t);
  const a = await newTeam(t, g);
  const b = await newTeam(t, g);
  const d1 = await newDriver(t, g, { teams: [a] });
  const d2 = await newDriver(t, g, { teams: [b] });
  const u1 = await newUser(t, { groupId: g, role: 'driver', driverId: d1.id });
  const u2 = await newUser(t, { groupId: g, role: 'driver', driverId: d2.id });
  return { g, a, b, d1, d2, u1, u2 };
}

const rate = (g: string, driverId: string, headers: Record<string, string>, payload: object) =>
  inject(t, { method: 'PUT', url: `/api/v4/groups/${g}/drivers/${driverId}/ratings`, headers, payload });
const own = (g: string, driverId: string, version: string, headers: Record<string, string>) =>
  inject(t, { url: `/api/v4/groups/${g}/drivers/${driverId}/ratings?driver_version=${encodeURIComponent(version)}`, headers });

describe('a driver rates the driver application', () => {
  it('submits a rating per app version and reads it back; null for a version not rated', async () => {
    const { g, d1, u1 } = await ratingGroup();
    const r = await rate(g, d1.id, u1.auth, { driver_version: '4.10.0', score: 4, comment: 'clear maps' });
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ driver_id: d1.id, driver_version: '4.10.0', score: 4, comment: 'clear maps', created_at: '2026-03-10T08:00:00.000Z' });
    expect(await t.db.query('SELECT score, comment FROM ratings WHERE group_id = $1 AND driver_id = $2', [g, d1.id])).toEqual([{ score: 4, comment: 'clear maps' }]);
    const back = await own(g, d1.id, '4.10.0', u1.auth);
    expect(back.status).toBe(200);
    expect(back.json).toEqual(r.json);
    const none = await own(g, d1.id, '4.11.0', u1.auth);
    expect(none.status).toBe(200);
    expect(none.json).toBeNull();
    expect(none.body).toBe('null');
  });

  it('a new rating of the same version replaces the old one (created_at kept)', async () => {
    const { g, d1, u1 } = await ratingGroup();
    await rate(g, d1.id, u1.auth, { driver_version: '5.0', score: 2 });
    clock.advance(3600_000);
    const r = await rate(g, d1.id, u1.auth, { driver_version: '5.0', score: 5, comment: null });
    expect(r.json).toMatchObject({ score: 5, comment: null, created_at: '2026-03-10T08:00:00.000Z', updated_at: '2026-03-10T09:00:00.000Z' });
    expect(await t.db.query('SELECT count(*)::int AS n FROM ratings WHERE group_id = $1 AND driver_id = $2', [g, d1.id])).toEqual([{ n: 1 }]);
  });

  it('a driver reads and gives only their own rating: 403 ForbiddenDifferentDriver otherwise', async () => {
    const { g, d1, d2, u1 } = await ratingGroup();
    await rate(g, d2.id, (await newUser(t, { groupId: g, role: 'driver', driverId: d2.id })).auth, { driver_version: '1', score: 3 });
    const read = await own(g, d2.id, '1', u1.auth);
    expect(read.status).toBe(403);
    expect(read.json.code).toBe('ForbiddenDifferentDriver');
    const write = await rate(g, d2.id, u1.auth, { driver_version: '1', score: 1 });
    expect(write.json.code).toBe('ForbiddenDifferentDriver');
    expect(await t.db.query('SELECT score FROM ratings WHERE group_id = $1 AND driver_id = $2', [g, d2.id])).toEqual([{ score: 3 }]);
    const unlinked = await newUser(t, { groupId: g, role: 'driver' });
    const r = await rate(g, d1.id, unlinked.auth, { driver_version: '1', score: 5 });
    expect(r.json.code).toBe('ForbiddenDifferentDriver');
    expect(r.json.detail).toContain('not linked');
    const operator = await newUser(t, { groupId: g, role: 'operator' });
    expect((await own(g, d1.id, '1', operator.auth)).json.code).toBe('GetDriverRatingRoleRequired');
  });

  it('checks the score and the version; a superuser reads any driver\'s rating; 404 DriverNotFound', async () => {
    const { g, d1, u1 } = await ratingGroup();
    for (const score of [0, 6, 3.5]) {
      const r = await rate(g, d1.id, u1.auth, { driver_version: '1', score });
      expect(r.status).toBe(422);
      expect(r.json.detail[0].loc).toEqual(['body', 'score']);
    }
    const noVersion = await inject(t, { url: `/api/v4/groups/${g}/drivers/${d1.id}/ratings`, headers: u1.auth });
    expect(noVersion.json.detail[0]).toMatchObject({ loc: ['query', 'driver_version'], type: 'missing' });
    const su = await newUser(t, { superuser: true });
    await rate(g, d1.id, u1.auth, { driver_version: '2', score: 4 });
    expect((await own(g, d1.id, '2', su.auth)).json.score).toBe(4);
    const ghost = await own(g, 'f'.repeat(24), '2', su.auth);
    expect(ghost.status).toBe(404);
    expect(ghost.json.code).toBe('DriverNotFound');
  });
});

describe('GET ratings', () => {
  it('answers the three shapes: each rating, averages per app version (natural order), one average for the group', async () => {
    const { g, d1, d2, u1, u2 } = await ratingGroup();
    const d3 = await newDriver(t, g);
    const u3 = await newUser(t, { groupId: g, role: 'driver', driverId: d3.id });
    await rate(g, d1.id, u1.auth, { driver_version: '4.10.0', score: 5 });
    await rate(g, d2.id, u2.auth, { driver_version: '4.10.0', score: 2 });
    await rate(g, d3.id, u3.auth, { driver_version: '4.10.0', score: 4 });
    await rate(g, d1.id, u1.auth, { driver_version: '4.9.0', score: 3, comment: 'slow start' });
    const reader = await newUser(t, { groupId: g, role: 'reader' });
    const url = `/api/v4/groups/${g}/ratings`;

    const all = await inject(t, { url, headers: reader.auth });
    expect(all.status).toBe(200);
    expect(all.json.map((r: any) => [r.driver_version, r.driver_id, r.score])).toEqual([
      ['4.9.0', d1.id, 3],
      ...[[d1.id, 5], [d2.id, 2], [d3.id, 4]].sort((x, y) => String(x[0]).localeCompare(String(y[0]))).map(([id, s]) => ['4.10.0', id, s]),
    ]);
    expect(all.json[0]).toMatchObject({ comment: 'slow start' });

    const byVersion = await inject(t, { url: `${url}?group_by=driver_version`, headers: reader.auth });
    expect(byVersion.json).toEqual([
      { driver_version: '4.9.0', average: 3, count: 1 },
      { driver_version: '4.10.0', average: 3.67, count: 3 },
    ]);
    const byGroup = await inject(t, { url: `${url}?group_by=group`, headers: reader.auth });
    expect(byGroup.json).toEqual([{ group_id: g, average: 3.5, count: 4 }]);
    expect((await inject(t, { url: `${url}?group_by=team`, headers: reader.auth })).status).toBe(422);
  });

  it('a caller limited to a team averages their team\'s drivers only; an empty group has a null average', async () => {
    const { g, a, d1, d2, u1, u2 } = await ratingGroup();
    await rate(g, d1.id, u1.auth, { driver_version: '1.0', score: 5 });
    await rate(g, d2.id, u2.auth, { driver_version: '1.0', score: 1 });
    const limited = await newUser(t, { groupId: g, role: 'operator', teams: [a] });
    const r = await inject(t, { url: `/api/v4/groups/${g}/ratings?group_by=group`, headers: limited.auth });
    expect(r.json).toEqual([{ group_id: g, average: 5, count: 1 }]);
    const list = await inject(t, { url: `/api/v4/groups/${g}/ratings`, headers: limited.auth });
    expect(list.json.map((x: any) => x.driver_id)).toEqual([d1.id]);
    const empty = await newGroup(t);
    const reader = await newUser(t, { groupId: empty, role: 'reader' });
    expect((await inject(t, { url: `/api/v4/groups/${empty}/ratings?group_by=group`, headers: reader.auth })).json).toEqual([{ group_id: empty, average: null, count: 0 }]);
    expect((await inject(t, { url: `/api/v4/groups/${empty}/ratings?group_by=driver_version`, headers: reader.auth })).json).toEqual([]);
  });

  it('403 InvalidRole for the roles not allowed (drivers, limited and external readers)', async () => {
    const { g } = await ratingGroup();
    for (const role of ['driver', 'limited_reader', 'external_reader'] as const) {
      const u: TestUser = await newUser(t, { groupId: g, role });
      const r = await inject(t, { url: `/api/v4/groups/${g}/ratings`, headers: u.auth });
      expect(r.status).toBe(403);
      expect(r.json.code).toBe('InvalidRole');
    }
  });
});
