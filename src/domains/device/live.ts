/**
 * Every accepted report is published on the live channel (PostgreSQL LISTEN/NOTIFY, so every API
 * instance hears it) for the live stream. Publishing happens after the commit and never blocks
 * nor fails the write: an error is logged and the report stays stored.
 */
import type { AppContext } from '../../platform/context.js';

export const LIVE_CHANNEL = 'transit_ops_live';
/** NOTIFY payloads are limited to 8000 bytes; messages are cut below that (sizes in UTF-8 bytes). */
const MAX_PAYLOAD = 7500;

export interface LiveReport {
  group_id: string;
  device_id: string;
  items: { type: string; item: Record<string, unknown> }[];
}

export function publishLive(ctx: AppContext, groupId: string, deviceId: string, items: { type: string; item: Record<string, unknown> }[]): void {
  if (items.length === 0) return;
  // Each item is serialised once; a payload is its items' JSON joined (a tenth of a device batch's
  // cost went to serialising twice).
  const head = `{"group_id":${JSON.stringify(groupId)},"device_id":${JSON.stringify(deviceId)},"items":[`;
  const payloads: string[] = [];
  let chunk: string[] = [];
  let size = 0;
  const flush = () => {
    if (chunk.length > 0) payloads.push(`${head}${chunk.join(',')}]}`);
    chunk = [];
    size = 0;
  };
  for (const it of items) {
    const json = JSON.stringify(it);
    const n = Buffer.byteLength(json) + 1;
    if (n > MAX_PAYLOAD - 200) continue;
    if (size + n > MAX_PAYLOAD - 200) flush();
    chunk.push(json);
    size += n;
  }
  flush();
  const q = outbox.get(ctx) ?? outbox.set(ctx, { payloads: [], timer: undefined }).get(ctx)!;
  q.payloads.push(...payloads);
  q.timer ??= setTimeout(() => {
    q.timer = undefined;
    const batch = q.payloads.splice(0);
    ctx.db.notify(LIVE_CHANNEL, batch).catch((err: unknown) => ctx.log.warn({ err, messages: batch.length }, 'live publication failed; the reports are stored'));
  }, PUBLISH_WINDOW_MS);
}

/**
 * Publications of one instance go out together, every PUBLISH_WINDOW_MS at most, in one round
 * trip (NOTIFY's lock and a query per batch were a tenth of the cost of a device batch).
 */
const PUBLISH_WINDOW_MS = 10;
const outbox = new WeakMap<AppContext, { payloads: string[]; timer: NodeJS.Timeout | undefined }>();
