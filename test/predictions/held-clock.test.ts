/**
 * An overdue vehicle's predictions held to its block's step of the clock (PREDICTIONS_CLOCK_STEP_SECONDS,
 * predict.ts heldClock), through predictTrips as the feeds call it: a bus that has not reached a
 * stop due minutes ago is predicted there within the step after now, and the prediction stays the
 * same (the same object given the previous ones, which the feeds then reuse) until the step is
 * passed, then moves a step on.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { predictTrips, type TripPrediction } from '../../src/domains/predictions/service.js';
import { item, newDevice, newDriver, newVehicle, send } from '../helpers/actual.js';
import { feedFixture, type FeedFixture } from '../feeds/fixture.js';

let f: FeedFixture;
beforeAll(async () => {
  f = await feedFixture();
  const { t, g } = f;
  // A bus on T3 left S1 on time at 08:30 local (07:30Z); S2 is due at 08:40 (07:40Z).
  const device = await newDevice(t, g);
  const r = await send(t, g, device.auth, [
    item('sign_on', '2026-03-10T07:00:00Z', { driver_id: await newDriver(t, g), vehicle_id: await newVehicle(t, g) }),
    item('trip_event', '2026-03-10T07:30:00Z', { trip_id: 'T3', service_date: '2026-03-10', event: 'stop_passed', stop_id: 'S1', stop_sequence: 1, gps_valid: true }),
  ]);
  expect(r.json.rejected).toEqual([]);
});
afterAll(async () => f?.t.close());

/** T3's prediction at the clock's time, given the previous call's (as the feeds' snapshot does). */
async function t3At(ms: number, previous?: TripPrediction): Promise<TripPrediction> {
  f.clock.set(new Date(ms));
  const out = await predictTrips(f.t.ctx, f.g, '2026-03-10', { now: f.clock.now(), ...(previous ? { previous: new Map([['T3', previous]]) } : {}) });
  return out.find((p) => p.trip_id === 'T3')!;
}
const s2Departure = (p: TripPrediction) => p.stops.find((s) => s.stop_id === 'S2')!.departure_at.getTime();

describe('an overdue bus held to its step of the clock', () => {
  it('S2, due 5 minutes ago and not reached, is predicted within the 15-s step after now, the same prediction object each second up to it, then a step later', async () => {
    expect(f.t.ctx.config.predictions.clockStepSeconds).toBe(15);
    const start = Date.parse('2026-03-10T07:45:00Z');
    const first = await t3At(start);
    const held = s2Departure(first);
    expect(held - start).toBeGreaterThanOrEqual(0);
    expect(held - start).toBeLessThan(15_000);
    // S3 (scheduled 9 minutes after S2's departure, nothing learned): 9 minutes after the held time, held with it.
    expect(first.stops.find((s) => s.stop_id === 'S3')!.departure_at.getTime()).toBe(held + 540_000);
    for (let ms = start + 1000; ms <= held; ms += 1000) expect(await t3At(ms, first), new Date(ms).toISOString()).toBe(first);
    const after = await t3At(held + 1000, first);
    expect(after).not.toBe(first);
    expect(s2Departure(after)).toBe(held + 15_000);
  });

  it('with PREDICTIONS_CLOCK_STEP_SECONDS=1, S2 is predicted at the clock itself, moving every second', async () => {
    const one = await feedFixture({ config: { predictions: { ...f.t.ctx.config.predictions, clockStepSeconds: 1 } } });
    try {
      const device = await newDevice(one.t, one.g);
      await send(one.t, one.g, device.auth, [
        item('sign_on', '2026-03-10T07:00:00Z', { driver_id: await newDriver(one.t, one.g), vehicle_id: await newVehicle(one.t, one.g) }),
        item('trip_event', '2026-03-10T07:30:00Z', { trip_id: 'T3', service_date: '2026-03-10', event: 'stop_passed', stop_id: 'S1', stop_sequence: 1, gps_valid: true }),
      ]);
      for (const iso of ['2026-03-10T07:45:00Z', '2026-03-10T07:45:01Z', '2026-03-10T07:45:07Z']) {
        one.clock.set(new Date(iso));
        const [p] = (await predictTrips(one.t.ctx, one.g, '2026-03-10', { now: one.clock.now() })).filter((x) => x.trip_id === 'T3');
        expect(s2Departure(p!), iso).toBe(Date.parse(iso));
      }
    } finally {
      await one.t.close();
    }
  });
});
