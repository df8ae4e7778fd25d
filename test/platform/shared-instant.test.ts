/**
 * The schedule's and the predictions' times are one Date per instant (platform/time.ts
 * sharedInstant): a city's feeds held 2.4 million Date objects for a few tens of thousands of
 * instants. Shared, each must still tell its own instant, past the number kept as well.
 */
import { describe, expect, it } from 'vitest';
import { atSeconds } from '../../src/domains/gtfs/time.js';
import { sharedInstant } from '../../src/platform/time.js';

describe('sharedInstant', () => {
  it('gives one Date per instant, at that instant, and a new one for another instant', () => {
    const ms = Date.parse('2026-12-07T13:02:08.000Z');
    const a = sharedInstant(ms);
    expect(a.getTime()).toBe(ms);
    expect(sharedInstant(ms)).toBe(a);
    expect(sharedInstant(ms + 1000)).not.toBe(a);
    expect(sharedInstant(ms + 1000).getTime()).toBe(ms + 1000);
  });

  it("is the Date of a stop's scheduled time: two times of a day at the same instant are one object", () => {
    const dayStart = new Date('2026-12-07T05:00:00.000Z');
    const arrival = atSeconds(dayStart, 8 * 3600 + 61)!;
    expect(arrival.toISOString()).toBe('2026-12-07T13:01:01.000Z');
    expect(atSeconds(dayStart, 8 * 3600 + 61)).toBe(arrival);
    expect(atSeconds(new Date('2026-12-06T05:00:00.000Z'), 32 * 3600 + 61)).toBe(arrival);
    expect(atSeconds(dayStart, null)).toBeNull();
  });

  it('tells every instant right past the number it keeps (300,000 instants, every one checked twice)', () => {
    const from = Date.parse('2026-12-07T00:00:00.000Z');
    for (let round = 0; round < 2; round++) {
      for (let i = 0; i < 300_000; i++) {
        const at = sharedInstant(from + i * 1000);
        if (at.getTime() !== from + i * 1000) expect(at.getTime(), `instant ${i}, round ${round}`).toBe(from + i * 1000);
      }
    }
  });
});
