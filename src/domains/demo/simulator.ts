/**
 * The demo's simulator: the network simulator (src/domains/simulate, docs/simulator.md) on the
 * demo feed, so a newcomer's vehicles run with the realistic traffic model and the predictions
 * learn from them. It logs in as the demo admin (device keys, the planning of a day that has none)
 * and the demo operator (reads the planning), follows the planning (block k → vehicle k and its
 * device, drivers 2k and 2k+1 with the relief between), and uses the hub as the busy stop.
 */
import { NetworkSimulator } from '../simulate/simulator.js';
import { demoAccount, DEMO_GROUP } from './load.js';
import { DEFAULT_SEED, generateNetwork } from './network.js';
import { demoAssignments } from './planning.js';

export interface SimulatorOptions {
  baseUrl: string;
  groupId?: string;
  seed?: number;
  /** The simulated time (tests drive it by hand; an accelerated run passes a faster clock). */
  now?: () => Date;
  /** Whole past service days sent at start (the backfill), before today. */
  backfillDays?: number;
  /** Seconds between two GPS positions (20). */
  positionEvery?: number;
  /** Positions older than this at send time are thinned to one a minute (a fast backfill). */
  thinAfterMs?: number;
  log?: (message: string) => void;
  admin?: { email: string; password: string };
  reader?: { email: string; password: string };
  /** At most this many vehicles (the first running at the start). */
  vehicles?: number;
  routes?: readonly string[];
}

export class Simulator extends NetworkSimulator {
  constructor(o: SimulatorOptions) {
    const seed = o.seed ?? DEFAULT_SEED;
    const network = generateNetwork(seed);
    super({
      baseUrl: o.baseUrl, groupId: o.groupId ?? DEMO_GROUP, adminAuth: o.admin ?? demoAccount('admin'), planningAuth: o.reader ?? demoAccount('operator'),
      seed, period: o.positionEvery ?? 20, busyStops: new Set([network.hubStop]), planDay: (date) => demoAssignments(network, date),
      ...(o.now ? { now: o.now } : {}), ...(o.backfillDays !== undefined ? { backfillDays: o.backfillDays } : {}),
      ...(o.thinAfterMs !== undefined ? { thinAfterMs: o.thinAfterMs } : {}), ...(o.log ? { log: o.log } : {}),
      ...(o.vehicles !== undefined ? { vehicles: o.vehicles } : {}), ...(o.routes ? { routes: o.routes } : {}),
    });
  }
}

/** A clock running `speed` times faster than the real one from `start` (an accelerated run). */
export function acceleratedClock(start: Date, speed: number): () => Date {
  const realStart = Date.now();
  return () => new Date(start.getTime() + (Date.now() - realStart) * speed);
}
