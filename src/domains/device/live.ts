/**
 * Every accepted report is published on the live channel (PostgreSQL LISTEN/NOTIFY, so every API
 * instance hears it) for the live stream. Publishing happens after the commit and never blocks
 * nor fails the write: an error is logged and the report stays stored.
 */
import type { AppContext } from '../../platform/context.js';

export const LIVE_CHANNEL = 'transit_ops_live';
/** NOTIFY payloads are limited to 8000 bytes; messages are cut below that. */
const MAX_PAYLOAD = 7500;

export interface LiveReport {
  group_id: string;
  device_id: string;
  items: { type: string; item: Record<string, unknown> }[];
}

export function publishLive(ctx: AppContext, groupId: string, deviceId: string, items: { type: string; item: Record<string, unknown> }[]): void {
  if (items.length === 0) return;
  const payloads: string[] = [];
  let chunk: LiveReport['items'] = [];
  let size = 0;
  const flush = () => {
    if (chunk.length > 0) payloads.push(JSON.stringify({ group_id: groupId, device_id: deviceId, items: chunk } satisfies LiveReport));
    chunk = [];
    size = 0;
  };
  for (const it of items) {
    const n = JSON.stringify(it).length + 1;
    if (n > MAX_PAYLOAD - 200) continue;
    if (size + n > MAX_PAYLOAD - 200) flush();
    chunk.push(it);
    size += n;
  }
  flush();
  void (async () => {
    for (const p of payloads) await ctx.db.notify(LIVE_CHANNEL, p);
  })().catch((err: unknown) => ctx.log.warn({ err, group_id: groupId, device_id: deviceId }, 'live publication failed; the reports are stored'));
}
