/**
 * Service dates and instants in a group's time zone. A GTFS service day starts at "noon minus
 * 12 h" local time (the GTFS reference), which is local midnight except on DST change days.
 */
import { DateTime } from 'luxon';
import { invalid } from './http/errors.js';
import { isoDate } from './http/params.js';

export function serviceDayStart(date: string, timezone: string): Date {
  return DateTime.fromISO(isoDate(date), { zone: timezone }).set({ hour: 12 }).minus({ hours: 12 }).toJSDate();
}

/** The instant of a time of the service day given in seconds since its start (may pass 24 h). */
export function instantOf(date: string, seconds: number, timezone: string): Date {
  return new Date(serviceDayStart(date, timezone).getTime() + seconds * 1000);
}

/** Instants whose Date is kept (sharedInstant): a network's schedule and predictions within two service days; past it, those kept are let go and kept anew. */
const INSTANTS_KEPT = 250_000;
const instants = new Map<number, Date>();

/**
 * The Date of an instant (epoch ms), one object per instant for the thread: never to be changed
 * (no set* method is called on it; nothing in the service does). The schedule's times of a service
 * day and the predictions' are a few tens of thousands of seconds, told again for every stop of
 * every trip: a city's feeds held 2.4 million Date objects (96 bytes each, with a number of 16),
 * 235 MB of the feeds' 1.19 GB heap, each new one copied by the young generation's collector
 * and marked at every full collection (a heap snapshot after four rebuilds of bench/feeds-rebuild.ts,
 * 2026-12-05).
 */
export function sharedInstant(ms: number): Date {
  let at = instants.get(ms);
  if (at === undefined) {
    if (instants.size >= INSTANTS_KEPT) instants.clear();
    at = new Date(ms);
    instants.set(ms, at);
  }
  return at;
}

/** The service date (YYYY-MM-DD) of an instant, by local calendar date in the zone. */
export function localDate(at: Date, timezone: string): string {
  return DateTime.fromJSDate(at, { zone: timezone }).toISODate()!;
}

export function addDays(date: string, days: number): string {
  return DateTime.fromISO(isoDate(date), { zone: 'UTC' }).plus({ days }).toISODate()!;
}

export interface Period {
  start: string;
  end: string;
  /** Instants bounding the period: start of the first service day, start of the day after the last. */
  from: Date;
  until: Date;
}

/** A period of service dates, both inclusive, checked against a maximum span (422 otherwise). */
export function period(startDate: string, endDate: string, timezone: string, maxDays: number): Period {
  const start = isoDate(startDate);
  const end = isoDate(endDate);
  if (end < start) throw invalid(['query', 'end_date'], 'end_date is before start_date', 'value_error', endDate);
  const days = DateTime.fromISO(end).diff(DateTime.fromISO(start), 'days').days + 1;
  if (days > maxDays) throw invalid(['query', 'end_date'], `The period spans ${days} days; at most ${maxDays}`, 'value_error', endDate);
  return { start, end, from: serviceDayStart(start, timezone), until: serviceDayStart(addDays(end, 1), timezone) };
}

/**
 * A formatter of instants (Dates, or epoch milliseconds) as ISO 8601 local times with their UTC
 * offset in a zone (2026-03-02T08:01:00+01:00), for exports of millions of rows: the offset is
 * looked up once per quarter hour of UTC time (offsets change on quarter hours at most) and the
 * date once per local day, not once per row; consecutive instants of an export are mostly in the
 * same quarter hour and day, so the last ones are kept at hand.
 */
export function isoWithOffset(timezone: string): (at: Date | number) => string {
  const offsets = new Map<number, { ms: number; text: string }>();
  const dates = new Map<number, string>();
  let lastBucket = NaN;
  let o = { ms: 0, text: '' };
  let lastDay = NaN;
  let date = '';
  return (at: Date | number) => {
    const ms = typeof at === 'number' ? at : at.getTime();
    const bucket = Math.floor(ms / 900_000);
    if (bucket !== lastBucket) {
      let known = offsets.get(bucket);
      if (!known) {
        const minutes = DateTime.fromMillis(bucket * 900_000, { zone: timezone }).offset;
        const sign = minutes < 0 ? '-' : '+';
        const abs = Math.abs(minutes);
        known = { ms: minutes * 60_000, text: `${sign}${TWO_DIGITS[Math.floor(abs / 60)]}:${TWO_DIGITS[abs % 60]}` };
        offsets.set(bucket, known);
      }
      o = known;
      lastBucket = bucket;
    }
    const local = Math.floor((ms + o.ms) / 1000);
    const day = Math.floor(local / 86_400);
    if (day !== lastDay) {
      let known = dates.get(day);
      if (known === undefined) {
        known = new Date(day * 86_400_000).toISOString().slice(0, 11);
        dates.set(day, known);
      }
      date = known;
      lastDay = day;
    }
    const second = local - day * 86_400;
    return `${date}${TWO_DIGITS[Math.floor(second / 3600)]}:${TWO_DIGITS[Math.floor(second / 60) % 60]}:${TWO_DIGITS[second % 60]}${o.text}`;
  };
}

const TWO_DIGITS = Array.from({ length: 60 }, (_, i) => String(i).padStart(2, '0'));
