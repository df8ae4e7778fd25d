// Small DOM and formatting helpers (no framework: the console is a handful of views).
type Attrs = Record<string, string | number | boolean | null | undefined | ((e: Event) => void)>;

export function h<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Attrs = {}, ...children: (Node | string | null | undefined | false)[]): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === null || v === undefined || v === false) continue;
    if (typeof v === 'function') node.addEventListener(k.replace(/^on/, ''), v);
    else if (k === 'text') node.textContent = String(v);
    else node.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children) if (c !== null && c !== undefined && c !== false) node.append(c);
  return node;
}

export const $ = <T extends HTMLElement = HTMLElement>(id: string) => document.getElementById(id) as T;

let timezone = 'UTC';
export const setTimezone = (tz: string) => {
  timezone = tz;
};
export const networkTimezone = () => timezone;

/** A time of day (HH:MM, or HH:MM:SS) in the network's time zone. */
export function clock(iso: string | number | null | undefined, seconds = false): string {
  if (iso === null || iso === undefined) return '—';
  return new Date(iso).toLocaleTimeString('en-GB', { hour: '2-digit', minute: '2-digit', ...(seconds ? { second: '2-digit' } : {}), hourCycle: 'h23', timeZone: timezone });
}

/** A delay in minutes, signed: "+4 min", "on time", "−2 min"; "—" when unknown. */
export function delayText(seconds: number | null | undefined): string {
  if (seconds === null || seconds === undefined) return '—';
  const m = Math.round(seconds / 60);
  if (m === 0) return 'on time';
  return `${m > 0 ? '+' : '−'}${Math.abs(m)} min`;
}

/** The class of a delay: early under −60 s, late over 180 s (the windows of stats/trip-tracking). */
export function delayClass(seconds: number | null | undefined): string {
  if (seconds === null || seconds === undefined) return 'unknown';
  return seconds < -60 ? 'early' : seconds > 180 ? 'late' : 'on-time';
}

export function debounce(fn: () => void, ms: number): () => void {
  let t: ReturnType<typeof setTimeout> | null = null;
  return () => {
    if (t) return;
    t = setTimeout(() => {
      t = null;
      fn();
    }, ms);
  };
}

/** CSV text (RFC 4180 quoting) of rows; the first row is the header. */
export function csv(rows: (string | number | null | undefined)[][]): string {
  const cell = (v: string | number | null | undefined) => {
    const s = v === null || v === undefined ? '' : String(v);
    return /[",\n\r]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
  };
  return rows.map((r) => r.map(cell).join(',')).join('\r\n') + '\r\n';
}

export function downloadLink(label: string, filename: string, text: string): HTMLAnchorElement {
  return h('a', { class: 'csv', download: filename, href: `data:text/csv;charset=utf-8,${encodeURIComponent(text)}`, 'data-testid': `csv-${filename}` }, label);
}

/** Distance in metres between two [lon, lat] points (equirectangular: fine at a city's scale). */
export function metres(a: readonly [number, number], b: readonly [number, number]): number {
  const k = Math.cos(((a[1] + b[1]) / 2) * Math.PI / 180);
  const dx = (b[0] - a[0]) * k * 111_320;
  const dy = (b[1] - a[1]) * 110_574;
  return Math.hypot(dx, dy);
}
