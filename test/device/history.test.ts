/**
 * Device history (acceptance): on a device with more than 10,000 events delivered out of order,
 * `at` and `before_id` give the same state as a naive full replay, and a reconstruction replays
 * a bounded number of events.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { applyPatch, lastIdOfSecond, SNAPSHOT_EVERY } from '../../src/domains/device/history.js';
import { inject, newGroup, newUser, setup, type TestApp, type TestUser } from '../helpers/app.js';
import { item, newDevice, send, type Item } from '../helpers/actual.js';

let t: TestApp;
let g: string;
let reader: TestUser;
let deviceId: string;
let events: { event_id: string; patch: Record<string, unknown> }[];
const N = 10_500;
const start = Date.parse('2026-01-01T00:00:00Z');

beforeAll(async () => {
  t = await setup();
  g = await newGroup(t);
  reader = await newUser(t, { groupId: g, role: 'reader' });
  const dev = await newDevice(t, g);
  deviceId = dev.deviceId;
  const random = fc.sample(fc.tuple(fc.integer({ min: 0, max: 30 * 86400 }), fc.constantFrom('battery_pct', 'network', 'app_version', 'charging', 'gps_enabled'), fc.integer({ min: 0, max: 100 }), fc.boolean()), { numRuns: N, seed: 7 });
  const items: Item[] = random.map(([sec, key, value, drop]) =>
    item('device_state', new Date(start + sec * 1000), { state: { [key]: drop && key !== 'battery_pct' ? null : key === 'network' ? `n${value % 5}` : key === 'charging' || key === 'gps_enabled' ? value % 2 === 0 : key === 'app_version' ? `3.${value % 7}` : value } }),
  );
  // batches of 500 in a scrambled order: most batches hold events older than the last snapshot
  const batches: Item[][] = [];
  for (let i = 0; i < items.length; i += 500) batches.push(items.slice(i, i + 500));
  for (const b of [...batches.filter((_, i) => i % 2 === 1), ...batches.filter((_, i) => i % 2 === 0)]) {
    const r = await send(t, g, dev.auth, b);
    expect(r.json.accepted).toHaveLength(b.length);
  }
  events = await t.db.query('SELECT event_id, patch FROM device_history_events WHERE group_id = $1 AND device_id = $2 ORDER BY event_id', [g, deviceId]);
}, 600_000);
afterAll(async () => t?.close());

/** The naive answer: replay every event within the bound from the start. */
function naive(within: (eventId: string) => boolean): Record<string, unknown> {
  let state: Record<string, unknown> = {};
  for (const e of events) if (within(e.event_id)) state = applyPatch(state, e.patch);
  return state;
}

const history = (query: string) => inject(t, { url: `/api/v4/groups/${g}/devices/${deviceId}/history${query}`, headers: reader.auth });

describe('device history', () => {
  it('holds every event once, with ordered 24-hex ids, and snapshots every few hundred', async () => {
    expect(events).toHaveLength(N);
    expect(events.every((e) => /^[0-9a-f]{24}$/.test(e.event_id))).toBe(true);
    const snapshots = await t.db.query<{ n: number }>('SELECT count(*)::int AS n FROM device_history_snapshots WHERE group_id = $1 AND device_id = $2', [g, deviceId]);
    expect(snapshots[0]!.n).toBe(Math.floor(N / SNAPSHOT_EVERY));
  });

  it('gives the state of a full replay for any `at`', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: -100, max: 30 * 86400 + 100 }), async (offset) => {
        const at = Math.floor(start / 1000) + offset;
        const r = await history(`?at=${at}`);
        expect(r.status).toBe(200);
        const bound = lastIdOfSecond(at);
        expect(r.json.state).toEqual(naive((id) => id <= bound));
        expect(r.json.replayed_events).toBeLessThan(SNAPSHOT_EVERY);
      }),
      { numRuns: 60, seed: 11 },
    );
  });

  it('gives the state of a full replay for any `before_id`, strictly before it', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 0, max: N - 1 }), async (i) => {
        const before = events[i]!.event_id;
        const r = await history(`?before_id=${before}`);
        expect(r.json.state).toEqual(naive((id) => id < before));
        expect(r.json.event_id).toBe(i === 0 ? null : events[i - 1]!.event_id);
      }),
      { numRuns: 60, seed: 13 },
    );
  });

  it('gives the current state without a bound, and refuses both bounds together', async () => {
    expect((await history('')).json.state).toEqual(naive(() => true));
    const both = await history(`?at=1&before_id=${events[0]!.event_id}`);
    expect(both.status).toBe(422);
    expect((await inject(t, { url: `/api/v4/groups/${g}/devices/unknown/history`, headers: reader.auth })).json.code).toBe('DeviceNotFound');
  });
});
