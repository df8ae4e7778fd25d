// The live stream (events/op/subscribe): the session is sent as the first message; each frame is
// a JSON array of envelopes. Listeners get every envelope; the stream reconnects after a close
// unless it was closed by stop() (logout).
export interface Envelope {
  type: string;
  at: string;
  data: Record<string, unknown>;
}

type Listener = (m: Envelope) => void;

export class LiveStream {
  private ws: WebSocket | null = null;
  private listeners = new Set<Listener>();
  private stopped = false;
  private retry: ReturnType<typeof setTimeout> | null = null;
  state: 'connecting' | 'live' | 'closed' = 'closed';

  constructor(private group: string, private token: string, private onState: (s: string) => void) {}

  on(fn: Listener): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  start(): void {
    this.stopped = false;
    const url = `${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/api/v4/groups/${encodeURIComponent(this.group)}/events/op/subscribe`;
    const ws = new WebSocket(url);
    this.ws = ws;
    this.state = 'connecting';
    this.onState('connecting to the live stream…');
    ws.addEventListener('open', () => ws.send(JSON.stringify({ session_id: this.token })));
    ws.addEventListener('message', (event) => {
      const frame = JSON.parse(String(event.data)) as Envelope | Envelope[];
      for (const m of Array.isArray(frame) ? frame : [frame]) {
        if (m.type === 'subscribed') {
          this.state = 'live';
          this.onState('live');
        }
        for (const fn of this.listeners) fn(m);
      }
    });
    ws.addEventListener('close', (event) => {
      if (this.ws !== ws) return;
      this.state = 'closed';
      if (this.stopped) return;
      this.onState(`stream closed (${event.code}): polling, reconnecting in 15 s`);
      if (event.code !== 4401 && event.code !== 4403) this.retry = setTimeout(() => this.start(), 15_000);
    });
  }

  stop(): void {
    this.stopped = true;
    if (this.retry) clearTimeout(this.retry);
    this.ws?.close(1000, 'logout');
    this.state = 'closed';
  }
}
