/** Live stream clients for tests: a real WebSocket to a listening app, with a message queue. */
import { WebSocket, type ClientOptions } from 'ws';
import type { FastifyInstance } from 'fastify';
import type { Envelope } from '../../src/domains/live/schemas.js';

export interface Stream {
  ws: WebSocket;
  /** Every message received so far, in order (the envelopes of a batch one by one). */
  received: Envelope[];
  /** Every frame received so far, parsed: an array of envelopes (batch, the default) or one envelope (`batch=false`). */
  frames: (Envelope | Envelope[])[];
  /** The next message not yet taken (of this type when given; others of other types are skipped). */
  next(type?: string): Promise<Envelope>;
  /** Resolves when the connection closes. */
  closed: Promise<{ code: number; reason: string }>;
}

export function wrap(ws: WebSocket): Stream {
  const received: Envelope[] = [];
  const frames: (Envelope | Envelope[])[] = [];
  let taken = 0;
  const waiters: (() => void)[] = [];
  ws.on('message', (data) => {
    const frame = JSON.parse(String(data)) as Envelope | Envelope[];
    frames.push(frame);
    received.push(...(Array.isArray(frame) ? frame : [frame]));
    for (const w of waiters.splice(0)) w();
  });
  const closed = new Promise<{ code: number; reason: string }>((resolve) => {
    ws.on('close', (code, reason) => {
      resolve({ code, reason: String(reason) });
      for (const w of waiters.splice(0)) w();
    });
  });
  return {
    ws,
    received,
    frames,
    closed,
    async next(type?: string) {
      for (;;) {
        while (taken < received.length) {
          const m = received[taken++]!;
          if (type === undefined || m.type === type) return m;
        }
        if (ws.readyState === WebSocket.CLOSED) throw new Error(`closed while waiting for ${type ?? 'a message'}`);
        await new Promise<void>((resolve) => waiters.push(resolve));
      }
    },
  };
}

/** The base ws:// URL of a listening app (listens on a free port the first time). */
export async function wsBase(app: FastifyInstance): Promise<string> {
  if (!app.server.listening) await app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = app.server.address() as { port: number };
  return `ws://127.0.0.1:${port}`;
}

export const streamPath = (groupId: string, batch = true) => `/api/v4/groups/${groupId}/events/op/subscribe${batch ? '' : '?batch=false'}`;

/** Opens the stream; rejects with the HTTP status when the upgrade is refused. */
export async function connect(app: FastifyInstance, groupId: string, o: ClientOptions & { headers?: Record<string, string>; batch?: boolean } = {}): Promise<Stream> {
  const ws = new WebSocket(`${await wsBase(app)}${streamPath(groupId, o.batch)}`, o);
  const stream = wrap(ws);
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('unexpected-response', (_req, res) => reject(Object.assign(new Error(`upgrade refused: ${res.statusCode}`), { status: res.statusCode })));
    ws.once('error', reject);
  });
  return stream;
}

/** Opens the stream and waits for `subscribed`. */
export async function subscribe(app: FastifyInstance, groupId: string, headers: Record<string, string>, o: { batch?: boolean } = {}): Promise<Stream> {
  const s = await connect(app, groupId, { headers, ...o });
  await s.next('subscribed');
  return s;
}

/** The close of a stream, or a failure after a generous deadline. */
export async function closeOf(s: Stream, deadlineMs = 20_000) {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error('the stream was not closed in time')), deadlineMs);
  });
  try {
    return await Promise.race([s.closed, late]);
  } finally {
    clearTimeout(timer);
  }
}
