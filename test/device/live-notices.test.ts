/**
 * The live channel's notifications (src/domains/device/live.ts): reports travel deflated, several
 * per notification, every one under PostgreSQL's 8000-byte limit, and read back in order.
 */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { notifications, pending, readLiveNotices, type LiveReport } from '../../src/domains/device/live.js';

const position = (i: number, extra: Record<string, unknown> = {}) => ({
  type: 'position',
  item: { id: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`, type: 'position', at: new Date(Date.UTC(2026, 5, 1, 5, 0, i)).toISOString(), lat: 45.75 + i / 1e4, lon: 4.85, gps_valid: true, ...extra },
});

const readAll = (payloads: string[]) => payloads.flatMap((p) => readLiveNotices(p)) as LiveReport[];

describe('live notifications', () => {
  it('carry many reports in few notifications, each under 8000 bytes, read back in order', () => {
    const reports: LiveReport[] = Array.from({ length: 40 }, (_, d) => ({ group_id: 'g', device_id: `D${d}`, items: Array.from({ length: 50 }, (_, i) => position(d * 100 + i)) }));
    const payloads = notifications(reports.map((r) => pending(r.group_id, r.device_id, r.items)), () => expect.unreachable());
    const plainBytes = reports.reduce((n, r) => n + JSON.stringify(r).length, 0);
    expect(payloads.length).toBeLessThan(reports.length);
    for (const p of payloads) expect(Buffer.byteLength(p)).toBeLessThanOrEqual(8000);
    expect(payloads.reduce((n, p) => n + p.length, 0)).toBeLessThan(plainBytes / 3);
    expect(readAll(payloads)).toEqual(reports);
  });

  it('cut a report too large for one notification into reports of the same device, items in order', () => {
    // Random text does not deflate: 200 items of ~300 bytes cannot fit in one notification.
    const items = Array.from({ length: 200 }, (_, i) => position(i, { note: randomBytes(150).toString('hex') }));
    const payloads = notifications([pending('g', 'D1', items)], () => expect.unreachable());
    expect(payloads.length).toBeGreaterThan(1);
    for (const p of payloads) expect(Buffer.byteLength(p)).toBeLessThanOrEqual(8000);
    const back = readAll(payloads);
    expect(back.every((r) => r.group_id === 'g' && r.device_id === 'D1')).toBe(true);
    expect(back.flatMap((r) => r.items)).toEqual(items);
  });

  it('leave out an item too large alone, and keep the others', () => {
    const huge = position(2, { note: randomBytes(8000).toString('hex') });
    const dropped: { device_id: string }[] = [];
    const payloads = notifications([pending('g', 'D1', [position(1), huge, position(3)])], (r) => dropped.push(r));
    expect(dropped).toEqual([{ group_id: 'g', device_id: 'D1', items: [] }]);
    expect(readAll(payloads).flatMap((r) => r.items)).toEqual([position(1), position(3)]);
  });

  it('read a plain JSON notice (trip updates) as one notice', () => {
    const notice = { group_id: 'g', trip_update: { update_id: 'u1', action: 'put' } };
    expect(readLiveNotices(JSON.stringify(notice))).toEqual([notice]);
  });
});
