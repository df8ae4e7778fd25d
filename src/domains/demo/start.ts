/**
 * The demo at start: `npm start` on a fresh clone (embedded database, nothing in it) loads the
 * demo network and runs the simulator, so a newcomer's first command shows the service working.
 *
 * - TRANSIT_OPS_DEMO unset: on with the embedded database when it is empty (first start) or
 *   holds the demo group (later starts); off with DATABASE_URL, and off on an embedded database
 *   that holds other groups.
 * - TRANSIT_OPS_DEMO=1: on whatever the database (the demo group is loaded when absent).
 * - TRANSIT_OPS_DEMO=0: off.
 */
import type { Config } from '../../config.js';
import type { AppContext } from '../../platform/context.js';
import { groupCount } from '../groups/service.js';
import { DEMO_ACCOUNTS, DEMO_GROUP, demoExists, loadDemo, type DemoSummary } from './load.js';

export type DemoDecision = 'load' | 'run' | 'off';

export async function demoDecision(ctx: AppContext, c: Config): Promise<DemoDecision> {
  if (c.demo === false) return 'off';
  if (await demoExists(ctx)) return 'run';
  if (c.demo === true) return 'load';
  if (c.databaseUrl) return 'off';
  return (await groupCount(ctx.db)) === 0 ? 'load' : 'off';
}

/** Loads the demo if the decision says so; the summary when it was loaded now. */
export async function prepareDemo(ctx: AppContext, c: Config): Promise<{ decision: DemoDecision; loaded: DemoSummary | null }> {
  const decision = await demoDecision(ctx, c);
  if (decision !== 'load') return { decision, loaded: null };
  return { decision, loaded: await loadDemo(ctx) };
}

/** What the console shows a newcomer: where to look, and how to log in. */
export function demoBanner(base: string, loaded: DemoSummary | null): string[] {
  const width = Math.max(...DEMO_ACCOUNTS.map((a) => a.email.length));
  return [
    `Demo network "${DEMO_GROUP}"${loaded ? ` loaded (${loaded.counts.routes} routes, ${loaded.counts.stops} stops, ${loaded.counts.vehicles} vehicles, ${loaded.counts.planned_trips} trips planned today)` : ''}:`,
    `  console:       ${base}/console/  (the control room: map, trips, string-lines, dashboard)`,
    `  live network:  ${base}/live`,
    '  accounts (one per role; demo passwords, never expose this database):',
    ...DEMO_ACCOUNTS.map((a) => `    ${a.role.padEnd(16)} ${a.email.padEnd(width)}  ${a.password}${a.teams.length ? `  (teams: ${a.teams.join(', ')})` : ''}`),
    loaded
      ? `  API key (reader, shown once): ${loaded.apiKey}`
      : '  API key: printed at the first start; make another with POST /api/v4/groups/demo/api-keys',
    `  try: curl -H "x-api-key: <key>" ${base}/api/v4/groups/${DEMO_GROUP}/vehicles`,
    '  TRANSIT_OPS_DEMO=0 turns the demo off.',
  ];
}
