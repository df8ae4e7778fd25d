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
 * Fan-out cost: a message is serialised once. Each client receives what came since its previous
 * frame at most every `batchMs` (the window), in one socket write: one frame holding a JSON array
 * of the envelopes (the default), or one frame per envelope (`?batch=false`). So 1,000 vehicles
 * reporting every 5 s cost each client 1000 / batchMs frames a second (10 at 100 ms) instead of
 * 200, and the server one write per client per window.
 *
 * The windows of the clients are staggered: the clients of a group are spread evenly over SLOTS
 * slots, and every batchMs / SLOTS one slot's turn comes: its clients are written the messages
 * that came since its previous turn. Ending every client's window at the same instant made 2,000
 * writes queue behind each other (the last client got the window ~40 ms after the first, up to
 * 100 ms on a busy machine), and held up the device API meanwhile; a slot of 500 clients is
 * written in a few milliseconds, and a message waits for its client's turn only (at most
 * batchMs). The bytes of a turn are built once per audience (clients of one group with the same
 * teams), not once per client. More slots would cut the writes' spread further, but each turn
 * wakes its readers: in bench:live (clients on the same 2 cores) 10 slots cost the server and the
 * clients more CPU than 4 for no better latency.
 *
 * A client keeps only the standing it still has: when memberships, sessions, API keys, users or
 * groups change (the change feed, any instance) and at each heartbeat, every client's credential
 * and standing in its group are computed again. A credential ended closes it 4401; no role left
 * (or a role no longer allowed, a group gone) closes it 4403/4404 as a subscription would be
 * refused; changed teams (or role) re-filter it from the next window, without a message.
 */
import type { Socket } from 'node:net';
import ws, { WebSocket } from 'ws';
import type { AppContext } from '../../platform/context.js';
import type { Service } from '../../platform/lifecycle.js';
import type { GroupScope, Principal } from '../../platform/http/access.js';
import { HttpError } from '../../platform/http/errors.js';
import { teamsVisible } from '../../platform/http/teams.js';
import { localDate } from '../../platform/time.js';
import { readLiveNotices, type LiveReport } from '../device/live.js';
import { stillValid } from '../auth/service.js';
import { getTripUpdate } from '../updates/service.js';
import { Attributions } from './attribution.js';
import { LIVE_CHANNEL, type LiveNotice, type TripUpdateNotice } from '../updates/notices.js';
import { CLOSE, DEVICE_MESSAGE_TYPES, type Envelope } from './schemas.js';

export interface HubOptions {
  maxBufferedBytes: number;
  heartbeatMs: number;
  /** The window of messages sent together: one frame (a JSON array) per batching client, one socket write per client. */
  batchMs: number;
}

interface Client {
  ws: WebSocket;
  /** The TCP socket under the WebSocket, for writes of pre-built frames; null in-process (tests' injectWS). */
  tcp: Socket | null;
  scope: GroupScope;
  /** One JSON array of envelopes per frame (the default), or one envelope per frame. */
  batch: boolean;
  /** Clients of one group with the same audience see the same messages, so they share bytes. */
  audience: string;
  /** The session or API key the client subscribed with, checked again at each heartbeat (a JWT is checked only at subscription). */
  sessionHash: string | null;
  apiKeyId: string | null;
  /** The client's standing in its group now (the subscription's check, run again). */
  standing: () => Promise<GroupScope>;
  alive: boolean;
  closing: boolean;
  /** The sequence number of the group's first message after the client subscribed. */
  from: number;
  slot: number;
}

/** A message of a group, numbered in the order it is to be sent, with the teams it is about (null: everyone). */
interface Entry {
  seq: number;
  m: Message;
  teams: readonly string[] | null;
}

interface Group {
  clients: Set<Client>;
  /** The clients of each slot. */
  slots: Set<Client>[];
  /** The messages not yet written to every slot, in order. */
  log: Entry[];
  /** Per slot, the sequence number of the last message it was written. */
  sent: number[];
  /** The sequence number of the group's last message. */
  seq: number;
}

/** A slot's turn: the messages of the group it had not been sent yet, being written to the clients it has now. */
interface Job {
  pending: Entry[];
  shared: Map<string, Bytes>;
  clients: Client[];
  next: number;
}

/** The slots the clients of a group are spread over: one slot's turn comes every batchMs / SLOTS. */
const SLOTS = 4;

/** Milliseconds of client writes in one turn of the event loop before the rest waits for the next. */
const WRITE_SLICE_MS = 4;

/** What the clients of one audience receive from one window, built on first use. */
interface Bytes {
  messages: Message[];
  /** Batching clients: one frame holding the JSON array; its payload for in-process clients. */
  batchPayload?: Buffer;
  batchFrame?: Buffer;
  /** Other clients: one frame per message, written together. */
  singleFrames?: Buffer;
}

/** ws's framing, which its types (@types/ws) do not declare. */
const wsSender = (ws as unknown as { Sender: { frame(data: Buffer, o: { fin: boolean; rsv1: boolean; opcode: number; mask: boolean; readOnly: boolean }): Buffer[] } }).Sender;

/**
 * An unmasked, final text frame (RFC 6455 5.2): what a server sends, built once per message by ws's
 * own framing (Sender.frame, what ws.send writes) and written to the sockets of every client of an
 * audience without being framed again.
 */
export function textFrame(payload: Buffer): Buffer {
  return Buffer.concat(wsSender.frame(payload, { fin: true, rsv1: false, opcode: 0x1, mask: false, readOnly: false }));
}

const OPEN_BRACKET = Buffer.from('[');
const COMMA = Buffer.from(',');
const CLOSE_BRACKET = Buffer.from(']');

/** Envelopes (serialised) as one JSON array. */
function jsonArray(payloads: Buffer[]): Buffer {
  const parts: Buffer[] = [OPEN_BRACKET];
  payloads.forEach((p, i) => parts.push(...(i === 0 ? [p] : [COMMA, p])));
  parts.push(CLOSE_BRACKET);
  return Buffer.concat(parts);
}

export interface HubStats {
  clients: number;
  /** Messages delivered (one per client it reached). */
  delivered: number;
  /** Frames written (a batch counts once per client). */
  frames: number;
  slowClientsClosed: number;
  deadPeersDropped: number;
  credentialsEnded: number;
  /** Clients closed because their role in the group was removed or is no longer allowed. */
  standingsEnded: number;
}

export class LiveHub implements Service {
  /** Closed before the server stops: its clients are told GoingAway (1001) rather than cut. */
  readonly closesBeforeServer = true;
  private readonly groups = new Map<string, Group>();
  private readonly attributions: Attributions;
  private listening: Promise<() => Promise<void>> | null = null;
  /** The notices being handled, chained per device or trip update. */
  private readonly chains = new Map<string, Promise<void>>();
  private heartbeat: NodeJS.Timeout | null = null;
  private turnTimer: NodeJS.Timeout | null = null;
  /** The groups with messages some slot has not been sent. */
  private readonly unsent = new Set<Group>();
  /** Slots' turns being written, in order. */
  private readonly jobs: Job[] = [];
  private draining: NodeJS.Immediate | null = null;
  /** The slot of the next turn, and when the previous turn was (performance.now()). */
  private turn = 0;
  private lastTurn = -Infinity;
  private readonly slots: number;
  private closed = false;
  readonly stats: HubStats = { clients: 0, delivered: 0, frames: 0, slowClientsClosed: 0, deadPeersDropped: 0, credentialsEnded: 0, standingsEnded: 0 };
  /** The check of every client's credential and standing: running, and whether to run again after. */
  private checking: Promise<void> | null = null;
  private checkAgain = false;
  private readonly unwatch: () => void;

  constructor(
    private readonly ctx: AppContext,
    private readonly opts: HubOptions,
  ) {
    this.attributions = new Attributions(ctx.db, (err) => ctx.log.warn({ err }, 'live attribution refresh failed'));
    // A turn at most every millisecond (the timers' resolution).
    this.slots = Math.max(1, Math.min(SLOTS, Math.floor(opts.batchMs)));
    this.unwatch = ctx.db.changes.onChange(STANDING_TABLES, () => this.recheck());
  }

  /** Adds an authorised client; resolves once the instance listens, so nothing stored after is missed. */
  async subscribe(
    ws: WebSocket, scope: GroupScope, principal: Pick<Principal, 'sessionHash' | 'apiKeyId'>, tcp: Socket | null, batch = true,
    standing: () => Promise<GroupScope> = async () => scope,
  ): Promise<void> {
    await this.listen();
    if (!this.groups.has(scope.groupId)) await this.attributions.warm(scope.groupId, this.ctx.clock.now().getTime());
    if (ws.readyState !== WebSocket.OPEN) return;
    let group = this.groups.get(scope.groupId);
    if (!group) {
      const slots = Array.from({ length: this.slots }, () => new Set<Client>());
      this.groups.set(scope.groupId, (group = { clients: new Set(), slots, log: [], sent: slots.map(() => 0), seq: 0 }));
    }
    const audience = audienceOf(scope);
    // The least filled slot, so that each turn writes about as many clients.
    const slots = group.slots;
    const slot = slots.reduce((best, clients, i) => (clients.size < slots[best]!.size ? i : best), 0);
    const client: Client = {
      ws, tcp, scope, batch, audience, sessionHash: principal.sessionHash, apiKeyId: principal.apiKeyId, standing, alive: true, closing: false, from: group.seq + 1, slot,
    };
    group.clients.add(client);
    group.slots[slot]!.add(client);
    this.stats.clients++;
    ws.on('pong', () => {
      client.alive = true;
    });
    ws.on('close', () => this.remove(client));
    this.startHeartbeat();
    this.sendNow(client, message(envelope('subscribed', scope.groupId, this.ctx.clock.now(), {
      role: scope.role,
      teams: scope.teams,
      heartbeat_seconds: this.opts.heartbeatMs / 1000,
      max_buffered_bytes: this.opts.maxBufferedBytes,
      batch_ms: batch ? this.opts.batchMs : null,
    })));
  }

  async close(): Promise<void> {
    this.closed = true;
    this.unwatch();
    if (this.heartbeat) clearInterval(this.heartbeat);
    this.flushAll();
    for (const group of this.groups.values()) for (const c of group.clients) c.ws.close(CLOSE.goingAway, 'GoingAway');
    this.groups.clear();
    const unlisten = await this.listening?.catch(() => null);
    await unlisten?.().catch(() => {});
    await Promise.all(this.chains.values());
    await this.checking;
  }

  private listen(): Promise<() => Promise<void>> {
    this.listening ??= this.ctx.db.listen(LIVE_CHANNEL, (payload) => this.onNotice(payload));
    return this.listening;
  }

  private onNotice(payload: string): void {
    let notices: LiveNotice[];
    try {
      notices = readLiveNotices<LiveNotice>(payload);
    } catch (err) {
      this.ctx.log.warn({ err }, 'unreadable live notice');
      return;
    }
    for (const notice of notices) this.dispatch(notice);
  }

  private dispatch(notice: LiveNotice): void {
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
    if (!this.groups.get(n.group_id)?.clients.size) return;
    const now = this.ctx.clock.now().getTime();
    const out: { m: Message; teams: readonly string[] | null }[] = [];
    for (const { type, item } of n.items) {
      const messageType = DEVICE_MESSAGE_TYPES[type as keyof typeof DEVICE_MESSAGE_TYPES];
      if (!messageType) continue;
      const { type: _t, at: rawAt, ...fields } = item;
      const at = new Date(String(rawAt));
      const a = await this.attributions.of(n.group_id, n.device_id, at, now);
      const data = { ...fields, device_id: n.device_id, duty_id: a.duty_id, driver_id: a.driver_id, vehicle_id: a.vehicle_id };
      out.push({ m: message(envelope(messageType, n.group_id, at, data)), teams: a.teams });
    }
    // The items of a report are queued together, so that a client receives them in one frame.
    for (const { m, teams } of out) this.broadcast(n.group_id, m, teams);
  }

  /** Trip updates concern the network: every subscriber of the group receives them, whatever its teams. */
  private async tripUpdate(n: TripUpdateNotice): Promise<void> {
    const first = this.groups.get(n.group_id)?.clients.values().next().value;
    if (!first) return;
    const update = await getTripUpdate(this.ctx.db, n.group_id, n.trip_update.update_id, localDate(this.ctx.clock.now(), first.scope.timezone));
    if (!update) return;
    const action = n.trip_update.action;
    const at = action === 'removed' ? update.removed_at : action === 'ended' ? update.ended_at : update.created_at;
    this.broadcast(n.group_id, message(envelope('trip_update', n.group_id, new Date(at ?? update.created_at), { action, update })), null);
  }

  /** teams null: every client of the group; else the clients whose teams meet them. Sent at each slot's turn. */
  private broadcast(groupId: string, m: Message, teams: readonly string[] | null): void {
    const group = this.groups.get(groupId);
    if (!group || group.clients.size === 0) return;
    group.log.push({ seq: ++group.seq, m, teams });
    this.unsent.add(group);
    this.schedule();
  }

  /**
   * A turn comes batchMs / slots after the previous one, or when the previous turns are all
   * written if that is later: a turn does not start while earlier ones still wait, so a server
   * short of CPU sends fewer, larger frames instead of piling up turns.
   */
  private schedule(): void {
    if (this.turnTimer || this.jobs.length > 0 || this.unsent.size === 0) return;
    this.turnTimer = setTimeout(() => this.nextTurn(), Math.max(0, this.lastTurn + this.opts.batchMs / this.slots - performance.now()));
  }

  /** One slot's turn, then its writes (in slices). */
  private nextTurn(): void {
    this.turnTimer = null;
    this.lastTurn = performance.now();
    this.endTurn(this.turn);
    this.turn = (this.turn + 1) % this.slots;
    this.drain();
  }

  /** Every slot's turn at once, written at once (closing, or before cutting clients). */
  private flushAll(): void {
    if (this.turnTimer) clearTimeout(this.turnTimer);
    this.turnTimer = null;
    for (let slot = 0; slot < this.slots; slot++) this.endTurn(slot);
    this.drain(Infinity);
  }

  /**
   * The slot's clients of each group get the messages that came since the slot's previous turn:
   * a send job over the clients it has now. For each audience (clients of the same teams) the
   * messages it may see are selected and serialised once (one JSON array, or the frames one after
   * the other), and written to each of its clients in one socket write.
   */
  private endTurn(slot: number): void {
    for (const group of this.unsent) {
      const sent = group.sent[slot]!;
      group.sent[slot] = group.seq;
      const clients = group.slots[slot]!;
      if (clients.size > 0 && sent < group.seq) {
        const pending = group.log.slice(group.log.findIndex((e) => e.seq > sent));
        this.jobs.push({ pending, shared: new Map(), clients: [...clients], next: 0 });
      }
      // What every slot has been sent is dropped.
      const all = Math.min(...group.sent);
      if (all === group.seq) {
        group.log = [];
        this.unsent.delete(group);
      } else if (group.log[0]!.seq <= all) group.log = group.log.slice(group.log.findIndex((e) => e.seq > all));
    }
  }

  /**
   * Writes the jobs' clients in order for `sliceMs` at most; the rest after the event loop has
   * served what waits (a write costs tens of microseconds: 2,000 clients at once would hold up the
   * device API's requests, and their database round trips, for ~50 ms each window).
   */
  private drain(sliceMs = WRITE_SLICE_MS): void {
    const deadline = performance.now() + sliceMs;
    let written = 0;
    while (this.jobs.length > 0) {
      const job = this.jobs[0]!;
      while (job.next < job.clients.length) {
        if (++written % 16 === 0 && performance.now() > deadline) {
          this.draining ??= setImmediate(() => {
            this.draining = null;
            this.drain();
          });
          return;
        }
        const c = job.clients[job.next++]!;
        if (!this.writable(c)) continue;
        let bytes: Bytes | undefined;
        if (c.from <= job.pending[0]!.seq) {
          bytes = job.shared.get(c.audience);
          if (!bytes) job.shared.set(c.audience, (bytes = this.select(job.pending, c.scope)));
        } else bytes = this.select(job.pending.filter((e) => e.seq >= c.from), c.scope);
        this.write(c, bytes);
      }
      this.jobs.shift();
    }
    this.schedule();
  }

  private select(pending: Entry[], scope: GroupScope): Bytes {
    return { messages: pending.filter((p) => p.teams === null || teamsVisible(scope, p.teams)).map((p) => p.m) };
  }

  /** False, after closing it, for a client that has more than maxBufferedBytes unread (4429 SlowClient). */
  private writable(c: Client): boolean {
    if (c.closing || c.ws.readyState !== WebSocket.OPEN) return false;
    // What the connection has not taken yet; the window being sent is not counted, so a bound
    // below one window's worth does not cut readers.
    const waiting = c.tcp ? c.tcp.writableLength : c.ws.bufferedAmount;
    if (waiting <= this.opts.maxBufferedBytes) return true;
    c.closing = true;
    this.stats.slowClientsClosed++;
    // The close frame follows what the socket already holds, and ws cuts the connection 30 s later
    // if the client still does not read.
    c.ws.close(CLOSE.slowClient, 'SlowClient');
    this.remove(c);
    return false;
  }

  /** Writes a window's messages to a client (the bytes are built once per audience, on first use). */
  private write(c: Client, bytes: Bytes): void {
    const messages = bytes.messages;
    if (messages.length === 0) return;
    this.stats.delivered += messages.length;
    if (c.batch) {
      bytes.batchPayload ??= jsonArray(messages.map((m) => m.payload));
      this.stats.frames++;
      if (c.tcp) c.tcp.write((bytes.batchFrame ??= textFrame(bytes.batchPayload)));
      else c.ws.send(bytes.batchPayload, { binary: false });
      return;
    }
    this.stats.frames += messages.length;
    if (c.tcp) c.tcp.write((bytes.singleFrames ??= Buffer.concat(messages.map(frameOf))));
    else for (const m of messages) c.ws.send(m.payload, { binary: false });
  }

  /** A message to one client alone, at once (`subscribed`, `error`): the group's window is not waited for. */
  private sendNow(c: Client, m: Message): void {
    if (!this.writable(c)) return;
    this.write(c, { messages: [m] });
  }

  private remove(c: Client): void {
    const group = this.groups.get(c.scope.groupId);
    if (group?.clients.delete(c)) {
      group.slots[c.slot]!.delete(c);
      this.stats.clients--;
      if (group.clients.size === 0) {
        this.groups.delete(c.scope.groupId);
        this.unsent.delete(group);
      }
    }
  }

  private clients(): Client[] {
    return [...this.groups.values()].flatMap((group) => [...group.clients]);
  }

  /**
   * Checks every client again (a change of who may see what, a heartbeat): one check at a time, and
   * changes that come during a check run one more after it.
   */
  private recheck(): void {
    if (this.closed) return;
    if (this.checking) {
      this.checkAgain = true;
      return;
    }
    this.checking = (async () => {
      // A burst of changes (logins insert sessions) makes one check.
      await new Promise((resolve) => setTimeout(resolve, RECHECK_AFTER_MS).unref());
      while (!this.closed) {
        this.checkAgain = false;
        await this.recheckCredentials();
        await this.recheckStandings();
        if (!this.checkAgain) break;
      }
    })()
      .catch((err: unknown) => this.ctx.log.warn({ err }, 'live credential check failed'))
      .finally(() => {
        this.checking = null;
      });
  }

  /** A client whose session ended (logout, expiry) or whose API key was revoked is closed 4401. */
  private async recheckCredentials(): Promise<void> {
    const clients = this.clients().filter((c) => c.sessionHash !== null || c.apiKeyId !== null);
    if (clients.length === 0) return;
    const distinct = (ids: (string | null)[]) => [...new Set(ids.filter((id): id is string => id !== null))];
    const valid = await stillValid(this.ctx, distinct(clients.map((c) => c.sessionHash)), distinct(clients.map((c) => c.apiKeyId)));
    const ended = clients.filter((c) => !valid.has((c.sessionHash ?? c.apiKeyId)!) && !c.closing);
    for (const c of ended) {
      this.stats.credentialsEnded++;
      this.end(c, CLOSE.unauthenticated, 'Unauthenticated', 'The session ended or the API key was revoked');
    }
  }

  /**
   * Each client's standing in its group, computed again: a client with no role left (or a role no
   * longer allowed, its group gone) is closed with the code a subscription would get; one whose
   * teams or role changed is re-filtered (its audience follows its teams).
   */
  private async recheckStandings(): Promise<void> {
    for (const c of this.clients()) {
      if (c.closing) continue;
      let scope: GroupScope;
      try {
        scope = await c.standing();
      } catch (err) {
        if (!(err instanceof HttpError) || err.status >= 500) throw err;
        if (c.closing) continue;
        this.stats.standingsEnded++;
        this.end(c, err.status === 401 ? CLOSE.unauthenticated : err.status === 404 ? CLOSE.groupNotFound : CLOSE.forbidden, err.code, err.message);
        continue;
      }
      c.scope = { ...scope, groupId: c.scope.groupId };
      c.audience = audienceOf(c.scope);
    }
  }

  /** Closes a client with an `error` message first; what it was about to receive goes before. */
  private end(c: Client, code: number, name: string, detail: string): void {
    this.flushAll();
    this.sendNow(c, message(envelope('error', c.scope.groupId, this.ctx.clock.now(), { code: name, detail })));
    c.closing = true;
    c.ws.close(code, name);
    this.remove(c);
  }

  private startHeartbeat(): void {
    if (this.heartbeat || this.closed) return;
    this.heartbeat = setInterval(() => {
      for (const c of this.clients()) {
        if (!c.alive) {
          this.stats.deadPeersDropped++;
          this.remove(c);
          c.ws.terminate();
          continue;
        }
        c.alive = false;
        c.ws.ping();
      }
      this.recheck();
    }, this.opts.heartbeatMs);
    this.heartbeat.unref();
  }
}

/** How long a check waits after the change that calls it, for the changes that come with it. */
const RECHECK_AFTER_MS = 100;

/** What a client's standing is read from: a change to one of them checks every client again. */
const STANDING_TABLES = ['memberships', 'sessions', 'api_keys', 'users', 'groups'];

/** Clients of one group with the same teams see the same messages. */
const audienceOf = (scope: GroupScope): string => (scope.teams === null ? '*' : [...scope.teams].sort().join('\u0000'));

interface Message {
  payload: Buffer;
  /** Its own frame, for the clients that take one envelope per frame (built once, on first use). */
  frame?: Buffer;
}

/** Serialised once, whatever the number of clients. */
function message(e: Envelope): Message {
  return { payload: Buffer.from(JSON.stringify(e)) };
}

const frameOf = (m: Message): Buffer => (m.frame ??= textFrame(m.payload));

export function envelope(type: Envelope['type'], groupId: string, at: Date, data: Record<string, unknown>): Envelope {
  return { type, group_id: groupId, at: at.toISOString(), data };
}
