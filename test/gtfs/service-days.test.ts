/** "Which trips run on date D in group G": the function the other domains build on. */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixedClock } from '../../src/platform/clock.js';
import { routesOf, stopsOf, tripShape, tripStopTimes, tripsOnServiceDate, versionInForce } from '../../src/domains/gtfs/service-days.js';
import { publishGtfs } from '../../src/domains/gtfs/service.js';
import { newGroup, setup, type TestApp } from '../helpers/app.js';
import { importZip, minimalZip, sampleFiles } from '../helpers/gtfs.js';

const clock = fixedClock('2019-02-01T10:00:00Z');
let t: TestApp;
let sample: { group: string; gtfsId: string };
beforeAll(async () => {
  t = await setup({ clock });
  const group = await newGroup(t, { timezone: 'Europe/Berlin' });
  const zip = readFileSync(createRequire(import.meta.url).resolve('sample-gtfs-feed/gtfs.zip'));
  const r = await importZip(t, group, zip, { publish: true });
  sample = { group, gtfsId: r.gtfs_id };
});
afterAll(async () => t?.close());

describe('the sample feed (sample-gtfs-feed), trips per date', () => {
  /*
   * Expected counts, worked out by hand from the package's txt files (not from the code):
   * - all-day: every day 2019-03-01..2019-08-20, minus 05-01 and 07-15..07-21 (06-15 is added, but
   *   runs anyway). Trips a-downtown, a-outbound, c-downtown, c-outbound: 4.
   * - on-weekends: Saturdays and Sundays 2019-03-03..2019-08-10, minus 07-20 and 07-21 (06-15, a
   *   Saturday, is added: no change). Trips b-downtown-on-weekends, b-outbound-on-weekends,
   *   c-outbound-on-weekends: 3.
   * - on-working-days: Monday to Saturday 2019-03-08..2019-07-20, minus 05-01 and 07-15..07-19.
   *   Its two trips are frequency-based: b-downtown 08:00:00–08:59:00 every 300 s gives 08:00,
   *   08:05 … 08:55 = 12 instances; b-outbound 15:00:00–16:00:00 every 600 s gives 15:00 … 15:50
   *   = 6 (16:00 is not before the end). 18 in all.
   * - during-dst: Saturday 2019-03-30 only. Trip during-dst-1: 1.
   * Weekdays: 2019-03-01 is a Friday, 03-30 a Saturday, 03-31 a Sunday, 05-01 a Wednesday, 06-15
   * a Saturday, 07-15 a Monday, 07-20 a Saturday, 08-10 a Saturday.
   */
  const expected: [string, number, string][] = [
    ['2019-02-28', 0, 'before every calendar'],
    ['2019-03-01', 4, 'Friday: all-day'],
    ['2019-03-02', 4, 'Saturday: all-day (weekends start 03-03, working days 03-08)'],
    ['2019-03-03', 7, 'Sunday: all-day + weekends'],
    ['2019-03-04', 4, 'Monday: all-day'],
    ['2019-03-08', 22, 'Friday: all-day + working days'],
    ['2019-03-09', 25, 'Saturday: all-day + weekends + working days'],
    ['2019-03-30', 26, 'Saturday: all-day + weekends + working days + during-dst'],
    ['2019-03-31', 7, 'Sunday: all-day + weekends'],
    ['2019-05-01', 0, 'Wednesday: all-day and working days removed'],
    ['2019-06-15', 25, 'Saturday: all-day + weekends + working days'],
    ['2019-07-15', 0, 'Monday: all-day and working days removed'],
    ['2019-07-20', 18, 'Saturday: all-day and weekends removed, last day of working days'],
    ['2019-07-21', 0, 'Sunday: all-day and weekends removed'],
    ['2019-07-22', 4, 'Monday: all-day (working days ended)'],
    ['2019-08-10', 7, 'Saturday: all-day + last day of weekends'],
    ['2019-08-20', 4, 'Tuesday: last day of all-day'],
    ['2019-08-21', 0, 'after every calendar'],
  ];
  it.each(expected)('%s: %i trips (%s)', async (date, count) => {
    const day = await tripsOnServiceDate(t.db, sample.group, date);
    expect(day.gtfsId).toBe(sample.gtfsId);
    expect(day.trips).toHaveLength(count);
  });

  it('expands frequencies into instances identified by trip_id and start_time, stop times shifted', async () => {
    const day = await tripsOnServiceDate(t.db, sample.group, '2019-03-08', { tripIds: ['b-downtown-on-working-days'] });
    expect(day.trips.map((x) => x.start_time)).toEqual(['08:00:00', '08:05:00', '08:10:00', '08:15:00', '08:20:00', '08:25:00', '08:30:00', '08:35:00', '08:40:00', '08:45:00', '08:50:00', '08:55:00']);
    // The template runs 13:14 (first departure) to 13:30 (last arrival): 16 minutes.
    expect(day.trips[1]).toMatchObject({ frequency: { headway_secs: 300, exact_times: 1 }, first_departure: 8 * 3600 + 5 * 60, last_arrival: 8 * 3600 + 21 * 60 });
    // CET (UTC+1) on 2019-03-08.
    expect(day.trips[1]!.first_departure_at.toISOString()).toBe('2019-03-08T07:05:00.000Z');
    const stops = await tripStopTimes(t.db, sample.group, '2019-03-08', 'b-downtown-on-working-days', { startTime: '08:05:00' });
    expect(stops.map((s) => [s.stop_id, s.stop_sequence, s.arrival_time, s.departure_time])).toEqual([
      ['airport', 1, 8 * 3600 + 4 * 60, 8 * 3600 + 5 * 60],
      ['lake', 3, 8 * 3600 + 11 * 60, 8 * 3600 + 13 * 60],
      ['center', 5, 8 * 3600 + 21 * 60, 8 * 3600 + 22 * 60],
    ]);
    expect(stops[0]).toMatchObject({ stop_name: 'International Airport (ABC)', stop_lat: 52.365, stop_lon: 13.511 });
    expect(stops[2]!.arrival_at!.toISOString()).toBe('2019-03-08T07:21:00.000Z');
  });

  it('times past 24:00 on the eve of the spring change: noon minus 12 h, not midnight', async () => {
    // during-dst-1 runs on service date 2019-03-30; clocks go forward at 02:00 on 03-31 (Berlin).
    const day = await tripsOnServiceDate(t.db, sample.group, '2019-03-30', { tripIds: ['during-dst-1'] });
    // 25:58:00 → 03-31 01:58 CET = 00:58Z; 26:03:00 → 03-31 02:03 "CET" = 03:03 CEST = 01:03Z.
    expect(day.trips.map((x) => [x.first_departure_at.toISOString(), x.last_arrival_at.toISOString()])).toEqual([['2019-03-31T00:58:00.000Z', '2019-03-31T01:03:00.000Z']]);
    // On the day of the change itself, the service day starts at 23:00 CET of the eve (noon CEST minus 12 h):
    // a-downtown-all-day leaves at 15:24:00, read in CEST (UTC+2).
    const sunday = await tripsOnServiceDate(t.db, sample.group, '2019-03-31', { tripIds: ['a-downtown-all-day'] });
    expect(sunday.dayStart.toISOString()).toBe('2019-03-30T22:00:00.000Z');
    expect(sunday.trips[0]!.first_departure_at.toISOString()).toBe('2019-03-31T13:24:00.000Z');
  });

  it('reads routes, stops and shapes of the version', async () => {
    const [babbage] = await routesOf(t.db, sample.group, sample.gtfsId, ['B']);
    expect(babbage).toMatchObject({ route_id: 'B', short_name: 'Babbage', long_name: 'Charles Babbage Tram Line', color: 'FF0000', text_color: 'FFFFFF', type: 0 });
    expect((await stopsOf(t.db, sample.group, sample.gtfsId)).map((s) => s.stop_id)).toContain('airport-2-boarding');
    const shapeLines = sampleFiles()['shapes.txt']!.split('\n').filter((l) => l.startsWith('a-downtown-all-day-s0,'));
    const shape = await tripShape(t.db, sample.group, sample.gtfsId, 'a-downtown-all-day-s0');
    expect(shape).toHaveLength(shapeLines.length);
    expect(shape[1]).toEqual({ sequence: 1, lat: 52.364398956, lon: 13.510567665, dist_traveled: 51.8 });
  });
});

describe('the version in force on a service date', () => {
  it('is the one published last on or before the date, in the group time zone; before any, the first published', async () => {
    const g = await newGroup(t, { timezone: 'Europe/Paris' });
    const v1 = (await importZip(t, g, minimalZip())).gtfs_id;
    const v2 = (await importZip(t, g, minimalZip())).gtfs_id;
    const v3 = (await importZip(t, g, minimalZip())).gtfs_id;
    expect(await versionInForce(t.db, g, '2026-03-01')).toBeNull();
    const at = async (iso: string, id: string) => {
      clock.set(iso);
      await publishGtfs(t.ctx, g, id, null);
    };
    await at('2026-03-01T10:00:00Z', v1);
    await at('2026-03-10T22:30:00Z', v2); // 23:30 in Paris: still 03-10
    await at('2026-03-20T23:30:00Z', v3); // 00:30 on 03-21 in Paris
    const inForce = async (d: string) => versionInForce(t.db, g, d);
    expect(await inForce('2026-02-01')).toBe(v1);
    expect(await inForce('2026-03-09')).toBe(v1);
    expect(await inForce('2026-03-10')).toBe(v2);
    expect(await inForce('2026-03-20')).toBe(v2);
    expect(await inForce('2026-03-21')).toBe(v3);
    // Publishing v1 again changes the future, not the past.
    await at('2026-04-01T08:00:00Z', v1);
    expect(await inForce('2026-03-15')).toBe(v2);
    expect(await inForce('2026-04-01')).toBe(v1);
    expect(await inForce('2027-01-01')).toBe(v1);
  });

  it('without any publication there is no trip; a given version can still be read', async () => {
    const g = await newGroup(t);
    const v = (await importZip(t, g, minimalZip())).gtfs_id;
    expect(await tripsOnServiceDate(t.db, g, '2026-03-02')).toMatchObject({ gtfsId: null, trips: [] });
    const day = await tripsOnServiceDate(t.db, g, '2026-03-02', { gtfsId: v });
    expect(day.trips.map((x) => [x.trip_id, x.block_id, x.start_time, x.first_stop_id, x.last_stop_id])).toEqual([['T1', 'B1', '08:00:00', 'S1', 'S3']]);
  });

  it('on the autumn change, a 08:00 departure is 08:00 on the wall clock', async () => {
    const g = await newGroup(t, { timezone: 'Europe/Paris' });
    const v = (await importZip(t, g, minimalZip({ 'calendar.txt': 'service_id,monday,tuesday,wednesday,thursday,friday,saturday,sunday,start_date,end_date\nWK,1,1,1,1,1,1,1,20260101,20261231\n' }))).gtfs_id;
    // 2026-10-25: clocks go back at 03:00 CEST. Noon CET (11:00Z) minus 12 h = 23:00Z on the eve.
    const day = await tripsOnServiceDate(t.db, g, '2026-10-25', { gtfsId: v });
    expect(day.dayStart.toISOString()).toBe('2026-10-24T23:00:00.000Z');
    expect(day.trips[0]!.first_departure_at.toISOString()).toBe('2026-10-25T07:00:00.000Z');
  });
});

describe('calendars, generated', () => {
  /** The reference rule, written from the GTFS reference independently of the SQL. */
  function runs(c: { days: boolean[] | null; start: string; end: string; added: string[]; removed: string[] }, date: string): boolean {
    if (c.removed.includes(date)) return false;
    if (c.added.includes(date)) return true;
    if (!c.days || date < c.start || date > c.end) return false;
    const weekday = (new Date(`${date}T00:00:00Z`).getUTCDay() + 6) % 7;
    return c.days[weekday]!;
  }
  const day = fc.integer({ min: 0, max: 40 }).map((n) => new Date(Date.UTC(2026, 2, 1 + n)).toISOString().slice(0, 10));
  const calendar = fc.record({
    days: fc.option(fc.array(fc.boolean(), { minLength: 7, maxLength: 7 }), { nil: null, freq: 5 }),
    start: day,
    length: fc.integer({ min: 0, max: 40 }),
    added: fc.uniqueArray(day, { maxLength: 4 }),
    removed: fc.uniqueArray(day, { maxLength: 4 }),
  }).map(({ days, start, length, added, removed }) => ({
    days, start, end: new Date(Date.parse(`${start}T00:00:00Z`) + length * 86_400_000).toISOString().slice(0, 10),
    added, removed: removed.filter((d) => !added.includes(d)),
  }));

  it('the trips of a date are those of the services the reference rule says run', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(calendar, { minLength: 1, maxLength: 6 }), fc.uniqueArray(day, { minLength: 1, maxLength: 8 }), async (calendars, dates) => {
        const g = await newGroup(t);
        const compact = (d: string) => d.replace(/-/g, '');
        const rows = calendars.map((c, i) => (c.days ? `C${i},${c.days.map(Number).join(',')},${compact(c.start)},${compact(c.end)}` : null)).filter(Boolean);
        const exceptions = calendars.flatMap((c, i) => [...c.added.map((d) => `C${i},${compact(d)},1`), ...c.removed.map((d) => `C${i},${compact(d)},2`)]);
        const services = calendars.map((_c, i) => `C${i}`).filter((s, i) => calendars[i]!.days || calendars[i]!.added.length + calendars[i]!.removed.length > 0);
        if (services.length === 0) return;
        const v = await importZip(t, g, minimalZip({
          'calendar.txt': rows.length ? `service_id,monday,tuesday,wednesday,thursday,friday,saturday,sunday,start_date,end_date\n${rows.join('\n')}\n` : null,
          'calendar_dates.txt': exceptions.length ? `service_id,date,exception_type\n${exceptions.join('\n')}\n` : null,
          'trips.txt': `route_id,service_id,trip_id\n${services.map((s) => `R1,${s},T_${s}`).join('\n')}\n`,
          'stop_times.txt': `trip_id,arrival_time,departure_time,stop_id,stop_sequence\n${services.map((s) => `T_${s},08:00:00,08:00:00,S1,1\nT_${s},08:30:00,08:30:00,S2,2`).join('\n')}\n`,
        }));
        for (const date of dates) {
          const got = (await tripsOnServiceDate(t.db, g, date, { gtfsId: v.gtfs_id })).trips.map((x) => x.trip_id).sort();
          const want = services.filter((s) => runs(calendars[Number(s.slice(1))]!, date)).map((s) => `T_${s}`).sort();
          expect(got, `${date} ${JSON.stringify(calendars)}`).toEqual(want);
        }
      }),
      { numRuns: 40 },
    );
  });
});
