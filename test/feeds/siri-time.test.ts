import { DateTime } from 'luxon';
import { describe, expect, it } from 'vitest';
import { siriTime } from '../../src/domains/feeds/siri/build.js';

describe('SIRI times', () => {
  it('write each instant as the local time and offset luxon gives (to the second), across the DST changes of four zones', () => {
    const zones = ['Europe/Zurich', 'America/New_York', 'Asia/Kathmandu', 'Australia/Lord_Howe'];
    // Every 7 minutes 13.25 seconds over the two days around each 2026 change, and a year at large steps.
    const instants: number[] = [];
    for (const day of ['2026-03-08', '2026-03-29', '2026-04-05', '2026-10-04', '2026-10-25', '2026-11-01']) {
      const from = Date.parse(`${day}T00:00:00Z`) - 86_400_000;
      for (let ms = from; ms < from + 2 * 86_400_000; ms += 433_250) instants.push(ms);
    }
    for (let ms = Date.parse('2026-01-01T00:00:00Z'); ms < Date.parse('2027-01-01T00:00:00Z'); ms += 3_600_000 * 7 + 1234) instants.push(ms);
    for (const zone of zones) {
      for (const ms of instants) {
        const truth = DateTime.fromMillis(Math.floor(ms / 1000) * 1000, { zone }).toISO({ suppressMilliseconds: true });
        expect(siriTime(new Date(ms), zone), `${new Date(ms).toISOString()} in ${zone}`).toBe(truth);
      }
    }
  });
});
