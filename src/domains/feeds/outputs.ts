/**
 * The outputs of a group's feed snapshot, named by what they are (OutputSpec: plain data), so that
 * the thread that holds the snapshot builds them, whichever it is: the service's own (embedded
 * database) or the feeds' worker thread (PostgreSQL, feed-thread.ts). Each spec has one recipe and
 * one name (the cache's key: the same spec, the same output).
 */
import type { Queryable } from '../../platform/db/index.js';
import type { Built, Recipe } from './cache.js';
import { TripPieces } from './fragments.js';
import { buildFeed, feedAsJson, type FeedName } from './gtfs-rt/feeds.js';
import type { NetworkNow } from './network.js';
import { contentOf, estimatedTimetableOutput, situationExchange, stopMonitoring, vehicleMonitoring } from './siri/build.js';
import { stopVisits } from './siri/service.js';

const XML = 'application/xml; charset=utf-8';

export type OutputSpec =
  | { kind: 'gtfs-rt'; feed: FeedName; format: 'protobuf' | 'json' }
  /** Empty body: no journey to tell (the route answers 204). */
  | { kind: 'siri-et'; lineRef?: string | undefined }
  | { kind: 'siri-vm'; staleSeconds: number; lineRef?: string | undefined; vehicleRef?: string | undefined }
  | { kind: 'siri-sx' };

/** Whether an output is told from the vehicles' positions alone (no trip, no update): refreshed on its own while a rebuild is late (cache.ts). */
export function positionsOnly(spec: OutputSpec): boolean {
  return (spec.kind === 'gtfs-rt' && spec.feed === 'vehicle-positions') || spec.kind === 'siri-vm';
}

/**
 * Whether an output is built after the others of a rebuild are served (cache.ts): the SIRI
 * EstimatedTimetable, a network's largest output by far (a city's: 182 MB of XML, 3–4 s of a
 * 6–8 s rebuild), which would otherwise hold back the trip-updates and positions read with it.
 */
export function builtLast(spec: OutputSpec): boolean {
  return spec.kind === 'siri-et';
}

/** The cache's name of an output: equal specs, equal names. */
export function outputName(spec: OutputSpec): string {
  switch (spec.kind) {
    case 'gtfs-rt':
      return `gtfs-rt/${spec.feed}${spec.format === 'json' ? '.json' : ''}`;
    case 'siri-et':
      return `siri/et?${spec.lineRef ?? ''}`;
    case 'siri-vm':
      return `siri/vm?${spec.lineRef ?? ''}&${spec.vehicleRef ?? ''}&${spec.staleSeconds}`;
    case 'siri-sx':
      return 'siri/sx';
  }
}

/** How an output is built from a snapshot (and what its previous build kept). */
export function recipeOf(spec: OutputSpec): Recipe {
  switch (spec.kind) {
    case 'gtfs-rt': {
      const { feed } = spec;
      if (spec.format === 'protobuf') return (net, state) => buildFeed(net, feed, state);
      return async (net): Promise<Built> => {
        const b = await buildFeed(net, feed);
        return { ...b, contentType: 'application/json; charset=utf-8', body: feedAsJson(feed, b.body) };
      };
    }
    case 'siri-et': {
      const { lineRef } = spec;
      return async (net, state): Promise<Built> => {
        const doc = await estimatedTimetableOutput(net, net.groupId, { lineRef, previous: state instanceof TripPieces ? state : undefined });
        return doc ? { contentType: XML, body: undefined, size: doc.size, gzip: doc.gzip, fingerprint: doc.fingerprint, state: doc.pieces } : { contentType: XML, body: Buffer.alloc(0), fingerprint: '' };
      };
    }
    case 'siri-vm': {
      const { staleSeconds, lineRef, vehicleRef } = spec;
      return (net): Built => {
        const doc = vehicleMonitoring(net, net.groupId, staleSeconds, { lineRef, vehicleRef });
        return { contentType: XML, body: Buffer.from(doc), fingerprint: contentOf(doc, net) };
      };
    }
    case 'siri-sx':
      return (net): Built => ({ contentType: XML, body: Buffer.from(situationExchange(net, net.groupId)), fingerprint: situationExchange({ ...net, now: new Date(0) }, net.groupId) });
  }
}

/** What a SIRI StopMonitoring request asks (the stop's visits are read from the snapshot, not cached). */
export interface StopMonitoringAsk {
  stopId: string;
  lineRef?: string | undefined;
  previewSeconds: number;
  max: number;
}

/** A SIRI StopMonitoring document of the snapshot. */
export async function stopMonitoringDocument(db: Queryable, net: NetworkNow, ask: StopMonitoringAsk): Promise<string> {
  const visits = await stopVisits(db, net, ask.stopId, { lineRef: ask.lineRef, previewSeconds: ask.previewSeconds, max: ask.max });
  return stopMonitoring(net, net.groupId, ask.stopId, visits);
}
