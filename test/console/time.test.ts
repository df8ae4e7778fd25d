import { describe, expect, it } from 'vitest';
import { dayStart, gtfsTime } from '../../console/src/servicetime.js';

// The string-line asks GET schedule for a window written in seconds of the service day (GTFS
// times), counted from noon minus 12 h in the network's time zone (the schedule's day_start).
describe('dayStart and gtfsTime (the string-line window as GTFS times)', () => {
  it('is local midnight on an ordinary day', () => {
    expect(new Date(dayStart('2026-03-10', 'Europe/Paris')).toISOString()).toBe('2026-03-09T23:00:00.000Z');
    expect(new Date(dayStart('2026-07-10', 'America/New_York')).toISOString()).toBe('2026-07-10T04:00:00.000Z');
  });

  it('is noon minus 12 h on the days the clocks change (not midnight)', () => {
    // 29 March 2026, Paris: 02:00 → 03:00; noon is 10:00Z, so the day starts at 22:00Z the day before.
    expect(new Date(dayStart('2026-03-29', 'Europe/Paris')).toISOString()).toBe('2026-03-28T22:00:00.000Z');
    // 25 October 2026, Paris: 03:00 → 02:00; noon is 11:00Z, the day starts at 23:00Z.
    expect(new Date(dayStart('2026-10-25', 'Europe/Paris')).toISOString()).toBe('2026-10-24T23:00:00.000Z');
  });

  it('writes seconds as HH:MM:SS, hours past 24 kept, negatives as 00:00:00', () => {
    expect(gtfsTime(0)).toBe('00:00:00');
    expect(gtfsTime(7 * 3600 + 5 * 60 + 9.7)).toBe('07:05:09');
    expect(gtfsTime(25 * 3600 + 10 * 60)).toBe('25:10:00');
    expect(gtfsTime(-30)).toBe('00:00:00');
  });
});
