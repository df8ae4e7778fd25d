/**
 * The live hub of one API instance: one LISTEN on the live channel, fanned out to this instance's
 * subscribers. The notices of one device (and the changes of one trip update) are handled one at
 * a time in arrival order (PostgreSQL delivers them in commit order), so a client sees a device's
 * reports in the order they were stored; different devices do not wait for each other.
 *
 * A client never holds more than `maxBufferedBytes` of unsent messages: past that it is closed
 * (4429 SlowClient) rather than buffered. Every `heartbeatMs` each client is pinged; one that has
 * not answered the previous ping is cut.
 *
 * Fan-out cost: a message is serialised and framed once, then the same bytes go to every client.
 * Frames wait at most FLUSH_MS and leave in one socket write per client, so 1,000 vehicles
 * reporting every 5 s cost each client ~5 writes a second instead of 200.
 */
import type { Socket } from 'node:net';
import { WebSocket } from 'ws';
import type { AppContext } from '../../platform/context.js';
import type { GroupScope, Principal } from '../../platform/http/access.js';
import { teamsVisible } from '../../platform/http/teams.js';
import { localDate } from '../../platform/time.js';
import type { LiveReport } from '../device/live.js';
import { stillValid } from '../auth/service.js';
import { getTripUpdate } from '../updates/service.js';
import { Attributions } from './attribution.js';
import { LIVE_CHANNEL, type LiveNotice, type TripUpdateNotice } from './channel.js';
import { CLOSE, DEVICE_MESSAGE_TYPES, type Envelope } from './schemas.js';

export interface HubOptions {
  maxBufferedBytes: number;
  heartbeatMs: number;
}

/** The longest a framed message waits for others to the same client (latency added: half of it on average). */
export const FLUSH_MS = 40;

interface Client {
  ws: WebSocket;
  /** The TCP socket under the WebSocket, for batched writes of ready frames; null in-process (tests' injectWS). */
  tcp: Socket | null;
  scope: GroupScope;
  /** The session or API key the client subscribed with, checked again at each heartbeat (a JWT is checked only at subscription). */
  sessionHash: string | null;
  apiKeyId: string | null;
  alive: boolean;
  closing: boolean;
  pending: Buffer[];
  pendingBytes: number;
}

/** An unmasked, final text frame (RFC 6455 5.2): what a server sends, built once per message. */
export function textFrame(payload: Buffer): Buffer {
  const n = payload.length;
  const head = n < 126 ? 2 : n < 65_536 ? 4 : 10;
  const frame = Buffer.allocUnsafe(head + n);
  frame[0] = 0x81;
  if (head === 2) frame[1] = n;
  else if (head === 4) {
    frame[1] = 126;
    frame.writeUInt16BE(n, 2);
  } else {
    frame[1] = 127;
    frame.writeBigUInt64BE(BigInt(n), 2);
  }
  payload.copy(frame, head);
  return frame;
}

export interface HubStats {
  clients: number;
  delivered: number;
  slowClientsClosed: number;
  deadPeersDropped: number;
  credentialsEnded: number;
}

export class LiveHub {
  private readonly groups = new Map<string, Set<Client>>();
  private readonly attributions: Attributions;
  private listening: Promise<() => Promise<void>> | null = null;
  /** The notices being handled, chained per device or trip update. */
  private readonly chains = new Map<string, Promise<void>>();
  private heartbeat: NodeJS.Timeout | null = null;
  private flushTimer: NodeJS.Timeout | null = null;
  private readonly toFlush = new Set<Client>();
  private closed = false;
  readonly stats: HubStats = { clients: 0, delivered: 0, slowClientsClosed: 0, deadPeersDropped: 0, credentialsEnded: 0 };

  constructor(
    private readonly ctx: AppContext,
    private readonly opts: HubOptions,
  ) {
    this.attributions = new Attributions(ctx.db, (err) => ctx.log.warn({ err }, 'live attribution refresh failed'));
  }

  /** Adds an authorised client; resolves once the instance listens, so nothing stored after is missed. */
  async subscribe(ws: WebSocket, scope: GroupScope, principal: Pick<Principal, 'sessionHash' | 'apiKeyId'>, tcp: Socket | null): Promise<void> {
    await this.listen();
    if (!this.groups.has(scope.groupId)) await this.attributions.warm(scope.groupId, this.ctx.clock.now().getTime());
    if (ws.readyState !== WebSocket.OPEN) return;
    const client: Client = { ws, tcp, scope, sessionHash: principal.sessionHash, apiKeyId: principal.apiKeyId, alive: true, closing: false, pending: [], pendingBytes: 0 };
    let set = this.groups.get(scope.groupId);
    if (!set) this.groups.set(scope.groupId, (set = new Set()));
    set.add(client);
    this.stats.clients++;
    ws.on('pong', () => {
      client.alive = true;
    });
    ws.on('close', () => this.remove(client));
    this.startHeartbeat();
    this.send(client, message(envelope('subscribed', scope.groupId, this.ctx.clock.now(), {
      role: scope.role,
      teams: scope.teams,
      heartbeat_seconds: this.opts.heartbeatMs / 1000,
      max_buffered_bytes: this.opts.maxBufferedBytes,
    })));
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.heartbeat) clearInterval(this.heartbeat);
    this.flush();
    for (const set of this.groups.values()) for (const c of set) c.ws.close(CLOSE.goingAway, 'GoingAway');
    this.groups.clear();
    const unlisten = await this.listening?.catch(() => null);
    await unlisten?.().catch(() => {});
    await Promise.all(this.chains.values());
  }

  private listen(): Promise<() => Promise<void>> {
    this.listening ??= this.ctx.db.listen(LIVE_CHANNEL, (payload) => this.onNotice(payload));
    return this.listening;
  }

  private onNotice(payload: string): void {
    let notice: LiveNotice;
    try {
      notice = JSON.parse(payload) as LiveNotice;
    } catch (err) {
      this.ctx.log.warn({ err }, 'unreadable live notice');
      return;
    }
    const k = 'trip_update' in notice ? `${notice.group_id}\u0000u\u0000${notice.trip_update.update_id}` : `${notice.group_id}\u0000d\u0000${notice.device_id}`;
    const chain = (this.chains.get(k) ?? Promise.resolve())
      .then(() => ('trip_update' in notice ? this.tripUpdate(notice) : this.deviceReport(notice)))
      .catch((err: unknown) => this.ctx.log.error({ err, group_id: notice.group_id }, 'live dispatch failed'));
    this.chains.set(k, chain);
    void chain.then(() => {
      if (this.chains.get(k) === chain) this.chains.delete(k);
    });
  }

  private async deviceReport(n: LiveReport): Promise<void> {
    // Sign events change who a device's reports are about: drop the cached answer first.
    if (n.items.some((i) => i.type === 'sign_on' || i.type === 'sign_off')) this.attributions.forget(n.group_id, n.device_id);
    if (!this.groups.get(n.group_id)?.size) return;
    const now = this.ctx.clock.now().getTime();
    for (const { type, item } of n.items) {
      const messageType = DEVICE_MESSAGE_TYPES[type as keyof typeof DEVICE_MESSAGE_TYPES];
      if (!messageType) continue;
      const { type: _t, at: rawAt, ...fields } = item;
      const at = new Date(String(rawAt));
      const a = await this.attributions.of(n.group_id, n.device_id, at, now);
      const data = { ...fields, device_id: n.device_id, duty_id: a.duty_id, driver_id: a.driver_id, vehicle_id: a.vehicle_id };
      this.broadcast(n.group_id, message(envelope(messageType, n.group_id, at, data)), a.teams);
    }
  }

  /** Trip updates concern the network: every subscriber of the group receives them, whatever its teams. */
  private async tripUpdate(n: TripUpdateNotice): Promise<void> {
    const set = this.groups.get(n.group_id);
    const first = set?.values().next().value;
    if (!first) return;
    const update = await getTripUpdate(this.ctx.db, n.group_id, n.trip_update.update_id, localDate(this.ctx.clock.now(), first.scope.timezone));
    if (!update) return;
    const action = n.trip_update.action;
    const at = action === 'removed' ? update.removed_at : action === 'ended' ? update.ended_at : update.created_at;
    this.broadcast(n.group_id, message(envelope('trip_update', n.group_id, new Date(at ?? update.created_at), { action, update })), null);
  }

  /** teams null: every client of the group; else the clients whose teams meet them. */
  private broadcast(groupId: string, m: Message, teams: readonly string[] | null): void {
    const set = this.groups.get(groupId);
    if (!set) return;
    for (const c of set) if (teams === null || teamsVisible(c.scope, teams)) this.send(c, m);
  }

  private send(c: Client, m: Message): void {
    if (c.closing || c.ws.readyState !== WebSocket.OPEN) return;
    // What the connection has not taken yet; the frames of the current flush window (FLUSH_MS of
    // messages) are not counted, so a bound below one window's worth does not cut readers.
    const waiting = c.tcp ? c.tcp.writableLength : c.ws.bufferedAmount;
    if (waiting > this.opts.maxBufferedBytes) {
      c.closing = true;
      this.stats.slowClientsClosed++;
      // What waits here is dropped; the close frame follows what the socket already holds, and ws
      // cuts the connection 30 s later if the client still does not read.
      c.pending = [];
      c.pendingBytes = 0;
      c.ws.close(CLOSE.slowClient, 'SlowClient');
      this.remove(c);
      return;
    }
    this.stats.delivered++;
    if (!c.tcp) {
      c.ws.send(m.payload, { binary: false });
      return;
    }
    c.pending.push(m.frame);
    c.pendingBytes += m.frame.length;
    this.toFlush.add(c);
    this.flushTimer ??= setTimeout(() => this.flush(), FLUSH_MS);
  }

  private flush(): void {
    if (this.flushTimer) clearTimeout(this.flushTimer);
    this.flushTimer = null;
    for (const c of this.toFlush) {
      if (!c.closing && c.ws.readyState === WebSocket.OPEN && c.pending.length > 0) {
        c.tcp!.write(c.pending.length === 1 ? c.pending[0]! : Buffer.concat(c.pending, c.pendingBytes));
      }
      c.pending = [];
      c.pendingBytes = 0;
    }
    this.toFlush.clear();
  }

  private remove(c: Client): void {
    const set = this.groups.get(c.scope.groupId);
    if (set?.delete(c)) {
      this.stats.clients--;
      if (set.size === 0) this.groups.delete(c.scope.groupId);
    }
  }

  /** A client whose session ended (logout, expiry) or whose API key was revoked is closed 4401. */
  private async recheckCredentials(): Promise<void> {
    const clients = [...this.groups.values()].flatMap((set) => [...set]).filter((c) => c.sessionHash !== null || c.apiKeyId !== null);
    if (clients.length === 0) return;
    const distinct = (ids: (string | null)[]) => [...new Set(ids.filter((id): id is string => id !== null))];
    const valid = await stillValid(this.ctx, distinct(clients.map((c) => c.sessionHash)), distinct(clients.map((c) => c.apiKeyId)));
    for (const c of clients) {
      if (valid.has((c.sessionHash ?? c.apiKeyId)!) || c.closing) continue;
      this.stats.credentialsEnded++;
      this.send(c, message(envelope('error', c.scope.groupId, this.ctx.clock.now(), { code: 'Unauthenticated', detail: 'The session ended or the API key was revoked' })));
      this.flush();
      c.closing = true;
      c.ws.close(CLOSE.unauthenticated, 'Unauthenticated');
      this.remove(c);
    }
  }

  private startHeartbeat(): void {
    if (this.heartbeat || this.closed) return;
    this.heartbeat = setInterval(() => {
      for (const set of this.groups.values()) {
        for (const c of set) {
          if (!c.alive) {
            this.stats.deadPeersDropped++;
            this.remove(c);
            c.ws.terminate();
            continue;
          }
          c.alive = false;
          c.ws.ping();
        }
      }
      void this.recheckCredentials().catch((err: unknown) => this.ctx.log.warn({ err }, 'live credential check failed'));
    }, this.opts.heartbeatMs);
    this.heartbeat.unref();
  }
}

interface Message {
  payload: Buffer;
  frame: Buffer;
}

/** Serialised and framed once, whatever the number of clients. */
function message(e: Envelope): Message {
  const payload = Buffer.from(JSON.stringify(e));
  return { payload, frame: textFrame(payload) };
}

export function envelope(type: Envelope['type'], groupId: string, at: Date, data: Record<string, unknown>): Envelope {
  return { type, group_id: groupId, at: at.toISOString(), data };
}
