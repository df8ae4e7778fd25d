/**
 * GTFS times and dates as written in the files. A time of day is a number of seconds since the
 * start of the service day (25:10:00 = 90600: times past 24:00:00 belong to the service day they
 * start in). The start of a service day, "noon minus 12 h" in the group's time zone, is
 * platform/time.ts's serviceDayStart.
 */
import { isRealDate } from '../../platform/http/params.js';
import { sharedInstant } from '../../platform/time.js';

/**
 * Seconds since the start of the service day of a GTFS time `H:MM:SS` or `HH:MM:SS` (hours up to
 * 999, surrounding spaces allowed); -1 when malformed. Read character by character: it runs
 * twice per stop time.
 */
export function gtfsSeconds(text: string): number {
  let i = 0;
  let end = text.length;
  while (i < end && text.charCodeAt(i) === 32) i++;
  while (end > i && text.charCodeAt(end - 1) === 32) end--;
  const colon = end - 6;
  const hourDigits = colon - i;
  if (hourDigits < 1 || hourDigits > 3 || text.charCodeAt(colon) !== 58 || text.charCodeAt(end - 3) !== 58) return -1;
  let hours = 0;
  for (let k = i; k < colon; k++) {
    const d = text.charCodeAt(k) - 48;
    if (d < 0 || d > 9) return -1;
    hours = hours * 10 + d;
  }
  const m1 = text.charCodeAt(colon + 1) - 48;
  const m2 = text.charCodeAt(colon + 2) - 48;
  const s1 = text.charCodeAt(end - 2) - 48;
  const s2 = text.charCodeAt(end - 1) - 48;
  if (m1 < 0 || m1 > 5 || m2 < 0 || m2 > 9 || s1 < 0 || s1 > 5 || s2 < 0 || s2 > 9) return -1;
  return hours * 3600 + (m1 * 10 + m2) * 60 + s1 * 10 + s2;
}

/** `HH:MM:SS`, hours past 23 kept (90600 → 25:10:00), as GTFS and GTFS-Realtime write it. */
export function formatGtfsTime(seconds: number): string {
  const h = Math.floor(seconds / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  const s = seconds % 60;
  return `${String(h).padStart(2, '0')}:${String(m).padStart(2, '0')}:${String(s).padStart(2, '0')}`;
}

/** A GTFS date `YYYYMMDD` as `YYYY-MM-DD`; null when it is not a real calendar date. */
export function gtfsDate(text: string): string | null {
  const t = text.trim();
  if (!/^\d{8}$/.test(t)) return null;
  const y = Number(t.slice(0, 4));
  const m = Number(t.slice(4, 6));
  const d = Number(t.slice(6, 8));
  return isRealDate(y, m, d) ? `${t.slice(0, 4)}-${t.slice(4, 6)}-${t.slice(6, 8)}` : null;
}

/** The instant `seconds` after the start of a service day (null stays null), as a Date shared by every time at that instant (sharedInstant: never changed). */
export function atSeconds(dayStart: Date, seconds: number | null): Date | null {
  return seconds === null ? null : sharedInstant(dayStart.getTime() + seconds * 1000);
}

/** ISO weekday of a YYYY-MM-DD date: 1 = Monday … 7 = Sunday. */
export function isoWeekday(date: string): number {
  const d = new Date(`${date}T00:00:00Z`).getUTCDay();
  return d === 0 ? 7 : d;
}
