/**
 * bench:network's devices' batches (POST device/reports), posted and timed on a thread of their
 * own (sender-worker.mjs), away from the load generator's event loop: a batch's latency is the
 * service's, not the load generator's holds. Used by both loads (network-sim.ts, network-replay.ts).
 */
import { HttpStatusError } from '../src/domains/simulate/client.js';
import type { BatchPost, ReportAnswer } from '../src/domains/simulate/simulator.js';
import { askingThread } from './support.js';

export function senderThread(baseUrl: string, groupId: string): { post: BatchPost; close: () => Promise<void> } {
  type Answer = { status: number; text: string; sentAt: number; answeredAt: number; retryAfter: number };
  const sender = askingThread<{ url: string; key: string; body: string }, Answer>(new URL('./sender-worker.mjs', import.meta.url));
  const url = `${baseUrl}/api/v4/groups/${groupId}/device/reports`;
  const post: BatchPost = async (key, items) => {
    const a = await sender.ask({ url, key, body: JSON.stringify({ items }) });
    if (a.status < 200 || a.status >= 300) throw new HttpStatusError(a.status, `POST device/reports: ${a.status} ${a.text.slice(0, 500)}`, a.retryAfter);
    return { answer: JSON.parse(a.text) as ReportAnswer, sentAt: a.sentAt, answeredAt: a.answeredAt };
  };
  return { post, close: sender.close };
}

