/**
 * Passenger information is served from a per-group cache: the network of a group is read at most
 * once per refresh interval (FEEDS_REFRESH_SECONDS) by each API instance, whatever the number of
 * clients, and each output built from it once. Outputs carry a weak ETag (a hash of their content
 * without the production timestamps) and a Last-Modified (when that content last changed), so a
 * client polling an unchanged feed gets 304 Not Modified.
 */
import { createHash } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../../platform/context.js';
import { networkNow, type NetworkNow } from './network.js';

export interface Output {
  body: Buffer;
  contentType: string;
  /** Weak ETag of the content (timestamps of production excluded). */
  etag: string;
  /** When the content last changed. */
  lastModified: Date;
  /** The snapshot it was built from. */
  net: NetworkNow;
}

export interface Built {
  body: Buffer;
  contentType: string;
  /** What identifies the content: equal fingerprints, same content. */
  fingerprint: Buffer | string;
}

export class FeedCache {
  private readonly snapshots = new Map<string, { at: number; net: Promise<NetworkNow> }>();
  private readonly outputs = new Map<string, Output & { fingerprint: string }>();

  constructor(private readonly ctx: AppContext) {}

  /** The network of the group, read again when the last reading is older than the refresh interval. */
  snapshot(groupId: string): Promise<NetworkNow> {
    const now = this.ctx.clock.now();
    const entry = this.snapshots.get(groupId);
    if (entry && now.getTime() - entry.at < this.ctx.config.feeds.refreshSeconds * 1000) return entry.net;
    // One reading at a time per group: concurrent requests share it.
    const net = networkNow(this.ctx.db, groupId, now, { staleVehicleSeconds: this.ctx.config.feeds.staleVehicleSeconds });
    this.snapshots.set(groupId, { at: now.getTime(), net });
    net.catch(() => {
      if (this.snapshots.get(groupId)?.net === net) this.snapshots.delete(groupId);
    });
    return net;
  }

  /** An output of the group's current snapshot, built once per snapshot. */
  async output(groupId: string, name: string, build: (net: NetworkNow) => Built | Promise<Built>): Promise<Output> {
    const net = await this.snapshot(groupId);
    const key = `${groupId}\n${name}`;
    const cached = this.outputs.get(key);
    if (cached?.net === net) return cached;
    const b = await build(net);
    // Read again after the build: a concurrent request may have stored a newer output meanwhile.
    const previous = this.outputs.get(key);
    const fingerprint = createHash('sha256').update(b.contentType).update(b.fingerprint).digest('base64url').slice(0, 27);
    const out = {
      body: b.body,
      contentType: b.contentType,
      fingerprint,
      etag: `W/"${fingerprint}"`,
      lastModified: previous?.fingerprint === fingerprint ? previous.lastModified : new Date(Math.floor(net.now.getTime() / 1000) * 1000),
      net,
    };
    this.outputs.set(key, out);
    return out;
  }
}

/**
 * Sends an output, or 304 when the client holds it: If-None-Match (weak comparison) first, else
 * If-Modified-Since (HTTP dates have whole seconds).
 */
export function sendOutput(req: FastifyRequest, reply: FastifyReply, out: Output, maxAgeSeconds: number) {
  reply.header('etag', out.etag);
  reply.header('last-modified', out.lastModified.toUTCString());
  reply.header('cache-control', `public, max-age=${maxAgeSeconds}`);
  reply.header('vary', 'accept-encoding');
  const inm = req.headers['if-none-match'];
  const ims = req.headers['if-modified-since'];
  const weak = (tag: string) => tag.trim().replace(/^W\//, '');
  let fresh = false;
  if (inm !== undefined) fresh = inm.trim() === '*' || inm.split(',').some((t) => weak(t) === weak(out.etag));
  else if (ims !== undefined) {
    const since = Date.parse(ims);
    fresh = !Number.isNaN(since) && out.lastModified.getTime() <= since;
  }
  if (fresh) return reply.code(304).send();
  return reply.type(out.contentType).send(out.body);
}
