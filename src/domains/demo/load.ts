/**
 * Loads the demo network into a database through the ordinary services (as an operator's
 * provisioning would): a group with two teams, one account per role, an API key, drivers,
 * vehicles, devices mounted in them, depots, the generated GTFS imported and published, the
 * planning of today, danger zones, an on-demand route and rail station links.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import CheapRuler from 'cheap-ruler';
import { DateTime } from 'luxon';
import type { AppContext } from '../../platform/context.js';
import type { GroupScope, Principal, Role } from '../../platform/http/access.js';
import { ROLES } from '../../platform/http/access.js';
import { localDate } from '../../platform/time.js';
import { createApiKey, hostPrincipal, wholeGroup } from '../auth/service.js';
import { createDepot } from '../fleet/depots.js';
import { createDevice } from '../fleet/devices.js';
import { createDriver } from '../fleet/drivers.js';
import { createVehicle } from '../fleet/vehicles.js';
import { createZone } from '../duties/service.js';
import { createGroup, createTeam, getGroup } from '../groups/service.js';
import { importGtfs } from '../gtfs/import/importer.js';
import { createRoute } from '../gtfs/on-demand/service.js';
import { createLink, importStations } from '../gtfs/rail/service.js';
import { locate, putPlanning } from '../planning/service.js';
import { addMember } from '../users/service.js';
import { demoFeedZip } from './feed.js';
import { DEFAULT_SEED, generateNetwork, type DemoNetwork } from './network.js';
import { demoAssignments, deviceIdOf, fleetSize, staffNumberOf, vehicleIdOf } from './planning.js';
import { pick, rngOf } from '../../platform/random.js';

export const DEMO_GROUP = 'demo';

export interface DemoAccount {
  role: Role;
  email: string;
  password: string;
  teams: string[];
}

/**
 * One account per role. The passwords are fixed and printed at every start: this is a demo on a
 * local embedded database, and the simulator logs in with them. Never load the demo into a
 * database that faces the internet.
 */
export const DEMO_ACCOUNTS: readonly DemoAccount[] = ROLES.map((role) => ({
  role,
  email: `${role.replaceAll('_', '-')}@demo.transit-ops.example`,
  password: `demo-${role.replaceAll('_', '-')}-2026`,
  teams: role === 'limited_reader' ? ['nord'] : [],
}));

export const demoAccount = (role: Role): DemoAccount => DEMO_ACCOUNTS.find((a) => a.role === role)!;

export interface DemoSummary {
  groupId: string;
  gtfsId: string;
  seed: number;
  serviceDate: string;
  accounts: readonly DemoAccount[];
  apiKey: string;
  counts: { stops: number; routes: number; trips: number; vehicles: number; drivers: number; devices: number; planned_trips: number };
}

const FIRST_NAMES = ['Camille', 'Louis', 'Inès', 'Hugo', 'Léa', 'Nathan', 'Chloé', 'Karim', 'Manon', 'Jules', 'Sarah', 'Yanis', 'Emma', 'Lucas', 'Zoé', 'Mehdi', 'Julie', 'Théo', 'Amina', 'Paul'];
const LAST_NAMES = ['Martin', 'Bernard', 'Dubois', 'Thomas', 'Robert', 'Richard', 'Petit', 'Durand', 'Leroy', 'Moreau', 'Simon', 'Laurent', 'Lefebvre', 'Michel', 'Garcia', 'Benali', 'Roux', 'Fournier', 'Girard', 'Nguyen'];

export async function demoExists(ctx: AppContext, groupId = DEMO_GROUP): Promise<boolean> {
  return (await getGroup(ctx.db, groupId)) !== null;
}

export async function loadDemo(ctx: AppContext, o: { seed?: number; groupId?: string } = {}): Promise<DemoSummary> {
  const seed = o.seed ?? DEFAULT_SEED;
  const groupId = o.groupId ?? DEMO_GROUP;
  const n = generateNetwork(seed);
  const r = rngOf(seed, 'resources');
  const today = localDate(ctx.clock.now(), n.timezone);

  await createGroup(ctx, { group_id: groupId, name: 'Lumière (demo network)', timezone: n.timezone, features: ['device_event_sourcing', 'on_demand', 'rail_data'] });
  await createTeam(ctx, wholeGroup(groupId), { team_id: 'nord', name: 'Dépôt Nord' });
  await createTeam(ctx, wholeGroup(groupId), { team_id: 'sud', name: 'Dépôt Sud' });
  const scope: GroupScope = { groupId, role: 'admin', teams: null, driverId: null, timezone: n.timezone, features: [] };

  // Vehicle k and drivers 2k, 2k+1 belong to the team of the weekday block k's route (planning.ts).
  const weekdayBlocks = n.blocks.filter((b) => b.service_id === 'WK');
  const teamOfBlock = (k: number) => n.routes.find((route) => route.route_id === weekdayBlocks[k]?.route_id)?.team_id ?? (k % 2 === 0 ? 'nord' : 'sud');
  const size = fleetSize(n);
  const driverIds: string[] = [];
  for (let j = 0; j < size.drivers; j++) {
    const d = await createDriver(ctx, scope, {
      driver_name: `${pick(r, FIRST_NAMES)} ${pick(r, LAST_NAMES)}`,
      staff_number: staffNumberOf(j),
      code: String(1001 + j),
      teams: [teamOfBlock(Math.floor(j / 2))],
      comment: j >= 2 * weekdayBlocks.length ? 'Spare driver' : null,
    });
    driverIds.push(d.id);
  }
  for (let k = 0; k < size.vehicles; k++) {
    const team = teamOfBlock(k);
    const articulated = weekdayBlocks[k]?.route_id === 'L1' || weekdayBlocks[k]?.route_id === 'L2';
    await createVehicle(ctx, scope, {
      vehicle_id: vehicleIdOf(k),
      fleet_number: String(101 + k),
      license_plate: `${String.fromCharCode(65 + (k % 26))}${String.fromCharCode(65 + ((k * 7) % 26))}-${String(101 + k).padStart(3, '0')}-LU`,
      teams: [team],
      capacity: articulated ? 140 : 90,
      status: k === size.vehicles - 1 ? 'maintenance' : 'active',
      comment: articulated ? 'Articulated 18 m' : 'Standard 12 m',
    });
    await createDevice(ctx, scope, { device_id: deviceIdOf(k), label: `Tablet of bus ${101 + k}`, vehicle_id: vehicleIdOf(k), team_id: team });
  }
  const north = n.stops.find((s) => s.stop_id === 'L2S01')!;
  const south = n.stops.find((s) => s.stop_id === n.railStop)!;
  await createDepot(ctx, scope, { depot_id: 'nord', name: 'Dépôt Nord', team_id: 'nord', address: '12 rue des Ateliers, Lumière', latitude: north.lat, longitude: north.lon });
  await createDepot(ctx, scope, { depot_id: 'sud', name: 'Dépôt Sud', team_id: 'sud', address: '4 avenue du Rail, Lumière', latitude: south.lat, longitude: south.lon });

  for (const a of DEMO_ACCOUNTS) {
    await addMember(ctx, scope, { email: a.email, password: a.password, role: a.role, teams: a.teams, organization: 'Lumière transports (demo)', ...(a.role === 'driver' ? { driver_id: driverIds[0]! } : {}) });
  }
  const key = await createApiKey(ctx, hostPrincipal, wholeGroup(groupId), { role: 'reader', group_ids: [groupId], name: 'demo data warehouse' });

  // The feed's calendars run from January of last year to December of next year.
  const year = Number(today.slice(0, 4));
  const gtfs = await importFeed(ctx, groupId, n, `${year - 1}-01-01`, `${year + 1}-12-31`);
  const planned = await putPlanning(ctx, scope, locate(demoAssignments(n, today)), 'demo-planning.json', null);

  await demoZones(ctx, groupId, n);
  await createRoute(ctx, groupId, {
    route_id: 'TAD-COLLINES', name: 'Transport à la demande des Collines', short_name: 'TAD', color: '8DC63F', text_color: '000000',
    description: 'Book by phone one hour ahead; serves the hamlets north of the city.',
    stops: [0, 1, 2, 3].map((i) => {
      const [lon, lat] = offsetOf(n, 5200 + i * 400, 330 + i * 12);
      return { stop_id: `TAD${i + 1}`, name: ['Hameau des Vignes', 'Les Collines', 'Ferme du Moulin', 'Chapelle Saint-Roch'][i]!, lat, lon };
    }),
  });
  const hub = n.stops.find((s) => s.stop_id === n.hubStop)!;
  await importStations(ctx, [
    'station_id;name;code;country;lat;lon',
    `DEMO-LUMIERE;Gare Lumière;87999001;FR;${south.lat};${south.lon}`,
    `DEMO-CENTRE;Lumière Centre (halte);87999002;FR;${hub.lat};${hub.lon}`,
    '',
  ].join('\n'));
  await createLink(ctx, groupId, { stop_id: n.railStop, station_id: 'DEMO-LUMIERE' });
  await createLink(ctx, groupId, { stop_id: n.hubStop, station_id: 'DEMO-CENTRE' });

  return {
    groupId, gtfsId: gtfs, seed, serviceDate: today, accounts: DEMO_ACCOUNTS, apiKey: key.value,
    counts: { stops: n.stops.length, routes: n.routes.length, trips: n.trips.length, vehicles: size.vehicles, drivers: size.drivers, devices: size.vehicles, planned_trips: planned.length },
  };
}

async function importFeed(ctx: AppContext, groupId: string, n: DemoNetwork, from: string, to: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'transit-ops-demo-'));
  try {
    const path = join(dir, 'demo-gtfs.zip');
    await writeFile(path, demoFeedZip(n, from, to));
    const result = await importGtfs(ctx, groupId, path, { name: `Demo network (seed ${n.seed})`, publish: true });
    return result.gtfs_id;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** Three danger zones on the lines: a school, road works (for the coming month), a low bridge. */
async function demoZones(ctx: AppContext, groupId: string, n: DemoNetwork) {
  const at = (stopId: string) => n.stops.find((s) => s.stop_id === stopId) ?? n.stops[1]!;
  const now = DateTime.fromJSDate(ctx.clock.now());
  const zones = [
    { stop: at('L1S04'), name: 'School exit', radius_m: 150, message: 'School exit 11:30 and 16:30: children crossing, 30 km/h.' },
    { stop: at('L3S06'), name: 'Road works', radius_m: 250, message: 'Road works: single lane, follow the flagger.', active_from: now.minus({ days: 1 }).toISO()!, active_to: now.plus({ days: 30 }).toISO()! },
    { stop: at('L4S03'), name: 'Low bridge', radius_m: 100, message: 'Low bridge 3.6 m: double-deck vehicles must not pass.' },
  ];
  for (const z of zones) {
    await createZone(ctx, groupId, { name: z.name, lat: z.stop.lat, lon: z.stop.lon, radius_m: z.radius_m, message: z.message, active_from: z.active_from ?? null, active_to: z.active_to ?? null });
  }
}

function offsetOf(n: DemoNetwork, metres: number, bearing: number): [number, number] {
  const [lon, lat] = new CheapRuler(n.center[1], 'meters').destination(n.center, metres, bearing);
  return [Math.round(lon * 1e6) / 1e6, Math.round(lat * 1e6) / 1e6];
}
