/**
 * Every accepted report is published on the live channel (PostgreSQL LISTEN/NOTIFY, so every API
 * instance hears it) for the live stream. Publishing happens after the commit and never blocks
 * nor fails the write: an error is logged and the report stays stored.
 *
 * The reports of an instance go out every PUBLISH_WINDOW_MS in one round trip, several reports
 * per notification, deflated: a notification is `z:` and the base64 of the raw DEFLATE of a JSON
 * array of LiveReport (readLiveNotices reads both forms; trip updates still travel as plain JSON,
 * channel.ts). PostgreSQL keeps every notification in its queue pages whoever listens, and those
 * pages were its biggest cost under ingest: plain JSON took four in ten of its CPU at 25,000
 * items/s; deflated, the same reports take about a fifth of the bytes.
 */
import { deflateRawSync, inflateRawSync } from 'node:zlib';
import type { AppContext } from '../../platform/context.js';
import type { Service } from '../../platform/lifecycle.js';

export const LIVE_CHANNEL = 'transit_ops_live';
/** NOTIFY payloads are limited to 8000 bytes; notifications are cut below that. */
const MAX_PAYLOAD = 7900;
/** The JSON gathered into one notification before it is deflated (about 5:1 on device reports). */
const RAW_BUDGET = 24_000;
const DEFLATED = 'z:';

export interface LiveReport {
  group_id: string;
  device_id: string;
  items: { type: string; item: Record<string, unknown> }[];
}

/** A report waiting for its window: its items already serialised once. */
export interface Pending {
  head: string;
  items: string[];
  bytes: number;
}

/**
 * The live publications of an app (a service of buildApp): reports gather for PUBLISH_WINDOW_MS,
 * then leave in one round trip. close() sends what is waiting.
 */
export class LiveOutbox implements Service {
  private reports: Pending[] = [];
  private timer: NodeJS.Timeout | undefined;
  private sending: Promise<void> = Promise.resolve();

  constructor(private readonly ctx: Pick<AppContext, 'db' | 'log'>) {}

  publish(groupId: string, deviceId: string, items: { type: string; item: Record<string, unknown> }[]): void {
    if (items.length === 0) return;
    this.reports.push(pending(groupId, deviceId, items));
    this.timer ??= setTimeout(() => this.flush(), PUBLISH_WINDOW_MS);
  }

  private flush(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    const reports = this.reports.splice(0);
    if (reports.length === 0) return;
    const log = this.ctx.log;
    let payloads: string[];
    try {
      payloads = notifications(reports, (dropped) => log.warn({ group_id: dropped.group_id, device_id: dropped.device_id }, 'a report item too large for a notification is left out of the live stream; it is stored'));
    } catch (err) {
      log.warn({ err }, 'live publication failed; the reports are stored');
      return;
    }
    const sent = this.ctx.db.notify(LIVE_CHANNEL, payloads).catch((err: unknown) => log.warn({ err, messages: payloads.length }, 'live publication failed; the reports are stored'));
    this.sending = Promise.all([this.sending, sent]).then(() => undefined);
  }

  /** Sends what waits for its window, and waits for the sending. */
  async close(): Promise<void> {
    this.flush();
    await this.sending;
  }
}

export function pending(groupId: string, deviceId: string, items: LiveReport['items']): Pending {
  const json = items.map((it) => JSON.stringify(it));
  return {
    head: `{"group_id":${JSON.stringify(groupId)},"device_id":${JSON.stringify(deviceId)},"items":[`,
    items: json,
    bytes: json.reduce((n, s) => n + s.length + 1, 60),
  };
}

/**
 * The notifications carrying `reports`, in order: as many reports per notification as fit in
 * MAX_PAYLOAD once deflated; a report too large alone is cut into several reports of the same
 * device (its items keep their order); an item too large alone is left out (`dropped`).
 */
export function notifications(reports: Pending[], dropped: (r: { group_id: string; device_id: string }) => void): string[] {
  const out: string[] = [];
  const text = (rs: Pending[]) => `[${rs.map((r) => `${r.head}${r.items.join(',')}]}`).join(',')}]`;
  const encode = (rs: Pending[]) => DEFLATED + deflateRawSync(text(rs), { level: 1 }).toString('base64');
  const emit = (rs: Pending[]): void => {
    const payload = encode(rs);
    if (Buffer.byteLength(payload) <= MAX_PAYLOAD) return void out.push(payload);
    if (rs.length > 1) {
      const half = Math.ceil(rs.length / 2);
      emit(rs.slice(0, half));
      emit(rs.slice(half));
      return;
    }
    const r = rs[0]!;
    if (r.items.length > 1) {
      const half = Math.ceil(r.items.length / 2);
      emit([{ ...r, items: r.items.slice(0, half) }]);
      emit([{ ...r, items: r.items.slice(half) }]);
      return;
    }
    dropped(JSON.parse(`${r.head}]}`) as LiveReport);
  };
  let group: Pending[] = [];
  let bytes = 0;
  for (const r of reports) {
    if (group.length > 0 && bytes + r.bytes > RAW_BUDGET) {
      emit(group);
      group = [];
      bytes = 0;
    }
    group.push(r);
    bytes += r.bytes;
  }
  if (group.length > 0) emit(group);
  return out;
}

/** The notices of one live notification, in order: a deflated array of reports, or one plain JSON notice. */
export function readLiveNotices<T = LiveReport>(payload: string): (LiveReport | T)[] {
  if (payload.startsWith(DEFLATED)) return JSON.parse(inflateRawSync(Buffer.from(payload.slice(DEFLATED.length), 'base64')).toString()) as LiveReport[];
  return [JSON.parse(payload) as T];
}

/**
 * Publications of one instance go out together, every PUBLISH_WINDOW_MS at most, in one round
 * trip (NOTIFY's lock and a query per batch were a tenth of the cost of a device batch).
 */
const PUBLISH_WINDOW_MS = 10;
