/**
 * The live hub of one API instance: one LISTEN on the live channel, fanned out to this instance's
 * subscribers. Notices are handled one at a time in arrival order (PostgreSQL delivers them in
 * commit order), so a client sees a device's reports in the order they were stored.
 *
 * A client never holds more than `maxBufferedBytes` of unsent messages: past that it is closed
 * (4429 SlowClient) rather than buffered. Every `heartbeatMs` each client is pinged; one that has
 * not answered the previous ping is cut.
 */
import type { Socket } from 'node:net';
import { WebSocket } from 'ws';
import type { AppContext } from '../../platform/context.js';
import type { GroupScope } from '../../platform/http/access.js';
import { teamsVisible } from '../../platform/http/teams.js';
import { localDate } from '../../platform/time.js';
import type { LiveReport } from '../device/live.js';
import { getTripUpdate } from '../updates/service.js';
import { Attributions } from './attribution.js';
import { LIVE_CHANNEL, type LiveNotice, type TripUpdateNotice } from './channel.js';
import { CLOSE, DEVICE_MESSAGE_TYPES, type Envelope } from './schemas.js';

export interface HubOptions {
  maxBufferedBytes: number;
  heartbeatMs: number;
}

interface Client {
  ws: WebSocket;
  scope: GroupScope;
  alive: boolean;
  closing: boolean;
}

export interface HubStats {
  clients: number;
  delivered: number;
  slowClientsClosed: number;
  deadPeersDropped: number;
}

export class LiveHub {
  private readonly groups = new Map<string, Set<Client>>();
  private readonly attributions: Attributions;
  private listening: Promise<() => Promise<void>> | null = null;
  private tail: Promise<void> = Promise.resolve();
  private heartbeat: NodeJS.Timeout | null = null;
  private closed = false;
  readonly stats: HubStats = { clients: 0, delivered: 0, slowClientsClosed: 0, deadPeersDropped: 0 };

  constructor(
    private readonly ctx: AppContext,
    private readonly opts: HubOptions,
  ) {
    this.attributions = new Attributions(ctx.db);
  }

  /** Adds an authorised client; resolves once the instance listens, so nothing stored after is missed. */
  async subscribe(ws: WebSocket, scope: GroupScope, _tcp?: Socket | null): Promise<void> {
    await this.listen();
    if (ws.readyState !== WebSocket.OPEN) return;
    const client: Client = { ws, scope, alive: true, closing: false };
    let set = this.groups.get(scope.groupId);
    if (!set) this.groups.set(scope.groupId, (set = new Set()));
    set.add(client);
    this.stats.clients++;
    ws.on('pong', () => {
      client.alive = true;
    });
    ws.on('close', () => this.remove(client));
    this.startHeartbeat();
    this.send(client, JSON.stringify(envelope('subscribed', scope.groupId, this.ctx.clock.now(), {
      role: scope.role,
      teams: scope.teams,
      heartbeat_seconds: this.opts.heartbeatMs / 1000,
      max_buffered_bytes: this.opts.maxBufferedBytes,
    })));
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.heartbeat) clearInterval(this.heartbeat);
    for (const set of this.groups.values()) for (const c of set) c.ws.close(CLOSE.goingAway, 'GoingAway');
    this.groups.clear();
    const unlisten = await this.listening?.catch(() => null);
    await unlisten?.().catch(() => {});
    await this.tail;
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
    this.tail = this.tail
      .then(() => ('trip_update' in notice ? this.tripUpdate(notice) : this.deviceReport(notice)))
      .catch((err: unknown) => this.ctx.log.error({ err, group_id: notice.group_id }, 'live dispatch failed'));
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
      this.broadcast(n.group_id, JSON.stringify(envelope(messageType, n.group_id, at, data)), a.teams);
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
    this.broadcast(n.group_id, JSON.stringify(envelope('trip_update', n.group_id, new Date(at ?? update.created_at), { action, update })), null);
  }

  /** teams null: every client of the group; else the clients whose teams meet them. */
  private broadcast(groupId: string, text: string, teams: readonly string[] | null): void {
    const set = this.groups.get(groupId);
    if (!set) return;
    const frame = Buffer.from(text);
    for (const c of set) if (teams === null || teamsVisible(c.scope, teams)) this.send(c, frame);
  }

  private send(c: Client, data: string | Buffer): void {
    if (c.closing || c.ws.readyState !== WebSocket.OPEN) return;
    if (c.ws.bufferedAmount > this.opts.maxBufferedBytes) {
      c.closing = true;
      this.stats.slowClientsClosed++;
      // The close frame waits behind the unsent messages; ws cuts the connection 30 s later if the
      // client still does not read. Nothing more is queued for it meanwhile.
      c.ws.close(CLOSE.slowClient, 'SlowClient');
      this.remove(c);
      return;
    }
    c.ws.send(data, { binary: false });
    this.stats.delivered++;
  }

  private remove(c: Client): void {
    const set = this.groups.get(c.scope.groupId);
    if (set?.delete(c)) {
      this.stats.clients--;
      if (set.size === 0) this.groups.delete(c.scope.groupId);
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
    }, this.opts.heartbeatMs);
    this.heartbeat.unref();
  }
}

export function envelope(type: Envelope['type'], groupId: string, at: Date, data: Record<string, unknown>): Envelope {
  return { type, group_id: groupId, at: at.toISOString(), data };
}
