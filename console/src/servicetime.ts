// Service-day times (no DOM: unit-tested in test/console/time.test.ts): the string-line asks GET
// schedule for a window written as GTFS times, seconds counted from the schedule's day_start.

/** The instant the service day's seconds count from: noon of the date in the time zone minus 12 h. */
export function dayStart(date: string, timezone: string): number {
  const [y, m, d] = date.split('-').map(Number) as [number, number, number];
  const guess = Date.UTC(y, m - 1, d, 12);
  const parts = new Intl.DateTimeFormat('en-US', { timeZone: timezone, hourCycle: 'h23', year: 'numeric', month: 'numeric', day: 'numeric', hour: 'numeric', minute: 'numeric', second: 'numeric' }).formatToParts(new Date(guess));
  const get = (k: string) => Number(parts.find((p) => p.type === k)?.value);
  const offset = Date.UTC(get('year'), get('month') - 1, get('day'), get('hour'), get('minute'), get('second')) - guess;
  return guess - offset - 12 * 3_600_000;
}

/** Seconds of the service day as GTFS writes them (HH:MM:SS, hours may pass 24). */
export function gtfsTime(seconds: number): string {
  const s = Math.max(0, Math.floor(seconds));
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${pad(Math.floor(s / 3600))}:${pad(Math.floor((s % 3600) / 60))}:${pad(s % 60)}`;
}
