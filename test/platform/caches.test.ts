/**
 * The instance caches (src/platform/cache.ts, src/platform/http/read-cache.ts) kept exact by the
 * change feed. The clock is fixed, so no entry ever expires by age here: every change a read
 * shows came through the feed or the write hook.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { fixedClock } from '../../src/platform/clock.js';
import { ANNOUNCED_TABLES } from '../../src/platform/db/changes.js';
import { acceptsGzip } from '../../src/platform/http/read-cache.js';
import { gunzipSync } from 'node:zlib';
import { inject, newGroup, newTeam, newUser, setup, type TestApp, type TestUser } from '../helpers/app.js';
import { newVehicle } from '../helpers/fleet.js';

let t: TestApp;
let g: string;
let admin: TestUser;
let reader: TestUser;
const clock = fixedClock('2026-03-02T08:00:00Z');

beforeAll(async () => {
  // Credentials live long here, so moving the clock past an answer's life keeps them cached.
  t = await setup({ clock, config: { caches: { authTtlMs: 600_000, readTtlMs: 1_000 } } });
  g = await newGroup(t);
  admin = await newUser(t, { groupId: g, role: 'admin' });
  reader = await newUser(t, { groupId: g, role: 'reader' });
});
afterAll(async () => t?.close());

const vehicles = (auth: Record<string, string>) => inject(t, { url: `/api/v4/groups/${g}/vehicles`, headers: auth });

/** Polls until `ok` holds (a notification travels asynchronously), failing after 5 s. */
async function eventually(ok: () => Promise<boolean>): Promise<void> {
  const end = Date.now() + 5000;
  while (!(await ok())) {
    if (Date.now() > end) throw new Error('the change never showed');
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('the answer cache', () => {
  it('serves a repeated read from the cache, and a write through the API drops it before its answer', async () => {
    await newVehicle(t, g);
    // The feed starts listening on first use: the first reads may not be cached yet.
    await eventually(async () => (await vehicles(reader.auth)).headers['x-cache'] === 'hit');
    const before = await vehicles(reader.auth);
    expect(before.headers['x-cache']).toBe('hit');

    const created = await inject(t, { method: 'POST', url: `/api/v4/groups/${g}/vehicles`, headers: admin.auth, payload: { vehicle_id: 'cache-1', fleet_number: 'c1', license_plate: 'CA-001-CH' } });
    expect(created.status).toBe(201);
    const after = await vehicles(reader.auth);
    expect(after.headers['x-cache']).toBe('miss');
    expect(after.json.map((v: { id: string }) => v.id)).toContain('cache-1');
    expect(after.json.length).toBe(before.json.length + 1);
  });

  it('drops an answer when the table changes behind the API (another instance, a script)', async () => {
    await eventually(async () => (await vehicles(reader.auth)).headers['x-cache'] === 'hit');
    await t.db.query("UPDATE vehicles SET comment = 'changed by a script' WHERE group_id = $1 AND vehicle_id = 'cache-1'", [g]);
    await eventually(async () => (await vehicles(reader.auth)).json.find((v: { id: string }) => v.id === 'cache-1')?.comment === 'changed by a script');
  });

  it('keeps one answer per standing in the group: a team-limited caller never gets the whole group', async () => {
    const team = await newTeam(t, g);
    const limited = await newUser(t, { groupId: g, role: 'reader', teams: [team] });
    const mine = await newVehicle(t, g, { teams: [team] });
    await eventually(async () => (await vehicles(reader.auth)).headers['x-cache'] === 'hit');
    const all = await vehicles(reader.auth);
    const seen = await vehicles(limited.auth);
    expect(seen.json.map((v: { id: string }) => v.id)).toEqual([mine.id]);
    expect(all.json.length).toBeGreaterThan(1);
  });

  it('gives a cached answer gzipped to a client that accepts gzip, the same JSON once inflated', async () => {
    for (let i = 0; i < 20; i++) await newVehicle(t, g, { comment: `a comment long enough to pass the gzip threshold ${i}` });
    const plain = async () => vehicles(reader.auth);
    await eventually(async () => (await plain()).headers['x-cache'] === 'hit');
    const identity = await plain();
    expect(identity.headers['content-encoding']).toBeUndefined();
    expect(identity.headers['vary']).toBe('Accept-Encoding');
    let zipped = await inject(t, { url: `/api/v4/groups/${g}/vehicles`, headers: { ...reader.auth, 'accept-encoding': 'br, gzip;q=0.8' } });
    // The gzip form is made in the background after the answer was stored.
    await eventually(async () => {
      zipped = await inject(t, { url: `/api/v4/groups/${g}/vehicles`, headers: { ...reader.auth, 'accept-encoding': 'br, gzip;q=0.8' } });
      return zipped.headers['content-encoding'] === 'gzip';
    });
    const raw = await t.app.inject({ url: `/api/v4/groups/${g}/vehicles`, headers: { ...reader.auth, 'accept-encoding': 'gzip' } });
    expect(raw.headers['content-encoding']).toBe('gzip');
    expect(raw.rawPayload.length).toBeLessThan(identity.body.length);
    expect(JSON.parse(gunzipSync(raw.rawPayload).toString())).toEqual(identity.json);
    const refused = await t.app.inject({ url: `/api/v4/groups/${g}/vehicles`, headers: { ...reader.auth, 'accept-encoding': 'gzip;q=0, identity' } });
    expect(refused.headers['content-encoding']).toBeUndefined();
    expect(JSON.parse(refused.body)).toEqual(identity.json);
  });

  it('after a change, concurrent readers wait for one of them to read the answer again', async () => {
    await eventually(async () => (await vehicles(reader.auth)).headers['x-cache'] === 'hit');
    await t.db.query("UPDATE vehicles SET comment = 'single flight' WHERE group_id = $1 AND vehicle_id = 'cache-1'", [g]);
    await eventually(async () => (await vehicles(reader.auth)).json.find((v: { id: string }) => v.id === 'cache-1')?.comment === 'single flight');
    await t.db.query("UPDATE vehicles SET comment = 'single flight 2' WHERE group_id = $1 AND vehicle_id = 'cache-1'", [g]);
    await eventually(async () => {
      const answers = await Promise.all(Array.from({ length: 5 }, () => vehicles(reader.auth)));
      if (!answers.some((a) => a.json.find((v: { id: string }) => v.id === 'cache-1')?.comment === 'single flight 2')) return false;
      // The five answers are the same, and at most one read the database.
      expect(new Set(answers.map((a) => a.body)).size).toBe(1);
      expect(answers.filter((a) => a.headers['x-cache'] === 'miss').length).toBe(1);
      return true;
    });
  });

  it('an answer that only aged is given as stale while one request reads it again', async () => {
    await eventually(async () => (await vehicles(reader.auth)).headers['x-cache'] === 'hit');
    const saved = clock.now();
    clock.advance(61_000); // past the 60 s life of an answer that does not move with time
    try {
      let first!: Promise<Awaited<ReturnType<typeof vehicles>>>;
      let others: Awaited<ReturnType<typeof vehicles>>[] = [];
      // The vehicles table is locked while the first request reads it again: the others must not wait.
      await t.db.transaction(async (tx) => {
        await tx.query('LOCK TABLE vehicles IN ACCESS EXCLUSIVE MODE');
        first = vehicles(reader.auth);
        await new Promise((r) => setTimeout(r, 50));
        others = await Promise.race([
          Promise.all(Array.from({ length: 3 }, () => vehicles(reader.auth))),
          new Promise<never>((_, reject) => setTimeout(() => reject(new Error('the other readers waited for the database')), 3000)),
        ]);
      });
      const filled = await first;
      expect(filled.headers['x-cache']).toBe('miss');
      expect(others.map((a) => a.headers['x-cache'])).toEqual(['stale', 'stale', 'stale']);
      expect(new Set([filled, ...others].map((a) => a.body)).size).toBe(1);
      expect((await vehicles(reader.auth)).headers['x-cache']).toBe('hit');
    } finally {
      clock.set(saved);
    }
  });

  it('reads Accept-Encoding as RFC 9110 says: names, *, and q=0 refusing', () => {
    expect(acceptsGzip('gzip')).toBe(true);
    expect(acceptsGzip('deflate, GZIP;q=0.5')).toBe(true);
    expect(acceptsGzip('*')).toBe(true);
    expect(acceptsGzip('gzip;q=0')).toBe(false);
    expect(acceptsGzip('gzip; q=0.000')).toBe(false);
    expect(acceptsGzip('br, deflate')).toBe(false);
    expect(acceptsGzip(undefined)).toBe(false);
  });

  it('does not serve a cached answer to a caller the access hook refuses', async () => {
    await eventually(async () => (await vehicles(reader.auth)).headers['x-cache'] === 'hit');
    const other = await newUser(t, { groupId: await newGroup(t), role: 'admin' });
    expect((await vehicles(other.auth)).status).toBe(403);
    expect((await vehicles({})).status).toBe(401);
  });
});

describe('the change feed', () => {
  it('every table has its trigger but the announced ones (the report tables)', async () => {
    // Partitions (of report tables, migration 0017) are left out: test/platform/partitions.test.ts.
    const untriggered = await t.db.query<{ relname: string }>(
      `SELECT c.relname FROM pg_class c WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind IN ('r', 'p') AND NOT c.relispartition
         AND NOT EXISTS (SELECT 1 FROM pg_trigger g WHERE g.tgrelid = c.oid AND g.tgname = 'transit_ops_change') ORDER BY 1`);
    expect(untriggered.map((r) => r.relname)).toEqual([...ANNOUNCED_TABLES, 'schema_migrations'].sort());
  });

  it('an announcement moves the watches of its tables at once, and only those', async () => {
    const feed = t.db.changes;
    const positions = feed.watch({ only: ['positions'] });
    const vehiclesOnly = feed.watch({ only: ['vehicles'] });
    const [p0, v0] = [positions.generation, vehiclesOnly.generation];
    feed.announce(['positions', 'trip_events']);
    expect(positions.generation).toBeGreaterThan(p0);
    expect(vehiclesOnly.generation).toBe(v0);
  });
});

describe('the credential caches', () => {
  it('a session ended behind the API stops working once the change is heard', async () => {
    const u = await newUser(t, { groupId: g, role: 'reader' });
    expect((await vehicles(u.auth)).status).toBe(200);
    expect((await vehicles(u.auth)).status).toBe(200);
    await t.db.query('UPDATE sessions SET ended_at = $1 WHERE user_id = $2', [clock.now(), u.userId]);
    await eventually(async () => (await vehicles(u.auth)).status === 401);
  });

  it('a role changed behind the API applies once the change is heard', async () => {
    const u = await newUser(t, { groupId: g, role: 'reader' });
    const url = `/api/v4/groups/${g}/vehicles`;
    const payload = { vehicle_id: 'cache-role', fleet_number: 'cr', license_plate: 'CA-002-CH' };
    expect((await inject(t, { method: 'POST', url, headers: u.auth, payload })).status).toBe(403);
    await t.db.query("UPDATE memberships SET role = 'admin' WHERE user_id = $1", [u.userId]);
    await eventually(async () => (await inject(t, { method: 'POST', url, headers: u.auth, payload })).status === 201);
  });

  it('an expired session is refused at its expiry, cached or not', async () => {
    const u = await newUser(t, { groupId: g, role: 'reader' });
    expect((await vehicles(u.auth)).status).toBe(200);
    const [s] = await t.db.query<{ expires_at: Date }>('SELECT expires_at FROM sessions WHERE user_id = $1', [u.userId]);
    const saved = clock.now();
    clock.set(new Date(s!.expires_at.getTime() + 1000));
    try {
      expect((await vehicles(u.auth)).status).toBe(401);
    } finally {
      clock.set(saved);
    }
  });
});

describe.skipIf(!process.env['DATABASE_URL'])('across instances (PostgreSQL)', () => {
  it('a write answered by another instance drops this instance\'s answer', async () => {
    const b = await buildApp({ config: t.ctx.config, db: await t.testDb.reopen(), clock, logger: false, serializers: 'lazy' });
    await b.ready();
    try {
      const url = `/api/v4/groups/${g}/vehicles`;
      await eventually(async () => (await inject(t, { url, headers: reader.auth })).headers['x-cache'] === 'hit');
      const r = await b.inject({ method: 'POST', url, headers: admin.auth, payload: { vehicle_id: 'cache-b', fleet_number: 'cb', license_plate: 'CA-003-CH' } });
      expect(r.statusCode).toBe(201);
      await eventually(async () => (await inject(t, { url, headers: reader.auth })).json.some((v: { id: string }) => v.id === 'cache-b'));
    } finally {
      await b.close();
    }
  });

  it('an announcement reaches the other instances', async () => {
    const other = await t.testDb.reopen();
    try {
      const theirs = other.changes;
      const watch = theirs.watch({ only: ['trip_events'] });
      await eventually(async () => theirs.live);
      const before = watch.generation;
      t.db.changes.announce(['trip_events']);
      await eventually(async () => watch.generation > before);
    } finally {
      await other.close();
    }
  });

  it('a lost listening connection stops caching until it is back, then starts afresh', async () => {
    const feed = t.db.changes;
    await eventually(async () => (await vehicles(reader.auth)).headers['x-cache'] === 'hit');
    // The listening connection's last statement is a LISTEN on a channel of this test's schema.
    const killed = await t.db.query<{ ok: boolean }>("SELECT pg_terminate_backend(pid) AS ok FROM pg_stat_activity WHERE query LIKE 'LISTEN %' AND position($1 in query) > 0", [t.testDb.schema]);
    expect(killed.length).toBeGreaterThanOrEqual(1); // this instance's, and the other instance's if still open
    await eventually(async () => !feed.live);
    // Down (the reconnection waits 500 ms): nothing is served from or kept in the cache.
    expect((await vehicles(reader.auth)).headers['x-cache']).toBe('miss');
    expect((await vehicles(reader.auth)).headers['x-cache']).toBe('miss');
    await eventually(async () => feed.live && (await vehicles(reader.auth)).headers['x-cache'] === 'hit');
  });
});

describe('the bound of an instance cache', () => {
  it('keeps at most `max` values and lets the least recently used one go first', async () => {
    const { WatchedCache } = await import('../../src/platform/cache.js');
    // The feed and the watch as the cache sees them: listening, and no table changed.
    const feed = { live: true } as ConstructorParameters<typeof WatchedCache<string>>[0];
    const watch = { generation: 0 } as ConstructorParameters<typeof WatchedCache<string>>[1];
    const c = new WatchedCache<string>(feed, watch, { ttlMs: 60_000, max: 2, clock });
    await c.get('a', async () => 'A');
    await c.get('b', async () => 'B');
    expect(c.peek('a')).toBe('A'); // a is now used more recently than b
    await c.get('c', async () => 'C');
    expect(c.peek('b')).toBeUndefined();
    expect(c.peek('a')).toBe('A');
    expect(c.peek('c')).toBe('C');
  });
});
