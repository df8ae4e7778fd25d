/**
 * The demo network: a fictional city of four cross-town bus lines meeting at a central square,
 * and a frequency-based shuttle to the railway station, generated from a seed. Shapes are smooth
 * curves through the city; stops lie on them every 400 to 550 m; timetables follow the hour of
 * the day (peaks, off-peak, evening) and the day of the week (weekdays, Saturdays, Sundays and
 * public holidays); the last evening trips end after midnight (times past 24:00:00). Vehicle
 * blocks are built greedily, a relief splits each long block between two drivers.
 *
 * The model is a pure function of the seed: the loader writes it as a GTFS feed and the
 * planning; the simulator reads them back over HTTP like any published feed (its hub stands for
 * the busy stop of the traffic model).
 */
import CheapRuler from 'cheap-ruler';
import { DateTime } from 'luxon';
import { between, intBetween, rng, type Rng } from '../../platform/random.js';

export type LonLat = [number, number];

export interface DemoStop {
  stop_id: string;
  name: string;
  lat: number;
  lon: number;
}

export interface DemoShape {
  shape_id: string;
  points: LonLat[];
  /** Metres along the shape of each point. */
  dists: number[];
}

export interface DemoStopTime {
  stop_id: string;
  stop_sequence: number;
  /** Seconds since the start of the service day (relative to the trip start for a frequency template). */
  arrival: number;
  departure: number;
  /** Metres along the shape. */
  dist: number;
  timepoint: boolean;
}

export interface DemoTrip {
  trip_id: string;
  route_id: string;
  service_id: ServiceId;
  direction_id: 0 | 1;
  shape_id: string;
  headsign: string;
  block_id: string | null;
  stop_times: DemoStopTime[];
  /** A template of frequencies.txt: its instances start every headway_secs from start to end. */
  frequency: { start: number; end: number; headway_secs: number } | null;
}

export interface DemoRoute {
  route_id: string;
  short_name: string;
  long_name: string;
  color: string;
  text_color: string;
  team_id: string;
}

export type ServiceId = 'WK' | 'SA' | 'SU';

/** A piece of work of one vehicle on a day type: a trip (or a frequency instance) in its block. */
export interface BlockTrip {
  trip_id: string;
  /** Seconds: the first departure (the instance's start for a frequency trip). */
  start: number;
  end: number;
  /** For a frequency instance, its start time (identifies it with the trip id). */
  start_time: number | null;
  /** 0 for the first driver of the block, 1 after the relief. */
  shift: 0 | 1;
}

export interface DemoBlock {
  block_id: string;
  service_id: ServiceId;
  route_id: string;
  trips: BlockTrip[];
}

export interface DemoNetwork {
  seed: number;
  timezone: string;
  center: LonLat;
  stops: DemoStop[];
  routes: DemoRoute[];
  shapes: DemoShape[];
  trips: DemoTrip[];
  blocks: DemoBlock[];
  /** The railway station the shuttle serves, and the central square (rail station links). */
  railStop: string;
  hubStop: string;
}

export const DEMO_TIMEZONE = 'Europe/Paris';
export const DEFAULT_SEED = 2026;
/** When the relief hands a block to its second driver: the first trip starting at or after. */
const RELIEF_AT = 13 * 3600 + 30 * 60;
const LAYOVER_MIN = 4 * 60;

const STREETS = [
  'Rue des Tanneurs', 'Place du Marché', 'Avenue Jean Jaurès', 'Quai des Célestins', 'Rue Victor Hugo', 'Les Halles', 'Pont Neuf',
  'Rue de la République', 'Hôtel de Ville', 'Square Pasteur', 'Rue des Écoles', 'Lycée Ampère', 'Parc de la Tête d\'Or', 'Clinique du Val',
  'Rue Garibaldi', 'Cours Lafayette', 'Place Bellecour', 'Boulevard des Belges', 'Rue Sainte-Hélène', 'Musée des Tissus', 'Les Brotteaux',
  'Rue Paul Bert', 'Place Guichard', 'Saxe-Gambetta', 'Rue Duguesclin', 'Croix-Rousse', 'Les Chartreux', 'Rue Marietton', 'Vaise Église',
  'Gorge de Loup', 'Point du Jour', 'Ménival', 'Champvert', 'Rue du Bourbonnais', 'Montchat', 'Grange Blanche', 'Hôpitaux Est',
  'Mermoz Pinel', 'Laënnec', 'Monplaisir Lumière', 'Sans Souci', 'Jet d\'Eau', 'États-Unis', 'Gerland Stade', 'Debourg', 'Rue de Gerland',
  'Halle Tony Garnier', 'Jean Macé', 'Université Lumière', 'Rue Chevreul', 'Place Jean Macé', 'Gratte-Ciel', 'Cusset', 'Bonnevay',
  'Charpennes', 'Masséna', 'Foch', 'Cordeliers', 'Saint-Paul', 'Vieux Quartier', 'Fourvière', 'Minimes', 'Trion', 'Rue des Fossés',
  'Collège Brossolette', 'Stade Municipal', 'Piscine du Rhône', 'Cimetière Nord', 'Zone Artisanale', 'Rue de la Soie', 'Les Sablons',
  'Rue des Prés', 'Chemin Vert', 'Moulin à Vent', 'Parc des Sports', 'Mairie Annexe', 'Rue de l\'Industrie', 'Place Carnot', 'La Doua',
];

const ROUTES: { short: string; long: string; color: string; text: string; bearing: number; reach: [number, number]; speedKmh: number; team: string; night: boolean }[] = [
  { short: '1', long: 'Ouest – Est', color: 'E3051B', text: 'FFFFFF', bearing: 265, reach: [4600, 4300], speedKmh: 18.5, team: 'nord', night: true },
  { short: '2', long: 'Nord – Sud', color: '0072BC', text: 'FFFFFF', bearing: 355, reach: [4200, 4800], speedKmh: 19, team: 'nord', night: true },
  { short: '3', long: 'Nord-Ouest – Sud-Est', color: '00A651', text: 'FFFFFF', bearing: 310, reach: [3800, 4100], speedKmh: 17.5, team: 'sud', night: false },
  { short: '4', long: 'Nord-Est – Sud-Ouest', color: 'F7941D', text: '000000', bearing: 40, reach: [3900, 3600], speedKmh: 18, team: 'sud', night: false },
];

/** Headways (minutes) by day type and period of the day: early, peak, day, evening. */
const HEADWAYS: Record<ServiceId, { from: number; to: number; minutes: number; peak?: boolean }[]> = {
  WK: [
    { from: 5.5, to: 7, minutes: 20 }, { from: 7, to: 9, minutes: 10, peak: true }, { from: 9, to: 16.5, minutes: 15 },
    { from: 16.5, to: 19, minutes: 10, peak: true }, { from: 19, to: 21, minutes: 20 }, { from: 21, to: 24.3, minutes: 30 },
  ],
  SA: [{ from: 6, to: 9, minutes: 20 }, { from: 9, to: 19, minutes: 15 }, { from: 19, to: 24.3, minutes: 30 }],
  SU: [{ from: 7.5, to: 21.5, minutes: 30 }],
};

export function generateNetwork(seed: number = DEFAULT_SEED): DemoNetwork {
  const r = rng(seed);
  const center: LonLat = [round6(4.8357 + between(r, -0.01, 0.01)), round6(45.764 + between(r, -0.01, 0.01))];
  const ruler = new CheapRuler(center[1], 'meters');
  const names = shuffled(r, STREETS);
  let nameIndex = 0;
  const nextName = () => names[nameIndex++ % names.length]!;

  const hub: DemoStop = { stop_id: 'HUB', name: 'Place Centrale', lon: center[0], lat: center[1] };
  const stops: DemoStop[] = [hub];
  const routes: DemoRoute[] = [];
  const shapes: DemoShape[] = [];
  const trips: DemoTrip[] = [];
  const blocks: DemoBlock[] = [];

  ROUTES.forEach((def, i) => {
    const route_id = `L${def.short}`;
    routes.push({ route_id, short_name: def.short, long_name: def.long, color: def.color, text_color: def.text, team_id: def.team });
    const a = ruler.destination(center, def.reach[0], def.bearing + between(r, -8, 8));
    const b = ruler.destination(center, def.reach[1], def.bearing + 180 + between(r, -20, 20));
    const controls = [a, ...bends(ruler, r, a, center), center, ...bends(ruler, r, center, b), b];
    const outbound = shapeOf(ruler, `${route_id}-0`, smooth(controls, 12));
    const hubDist = alongOf(ruler, outbound, center);
    const lineStops: { stop: DemoStop; dist: number }[] = [];
    for (const [from, to] of [[0, hubDist], [hubDist, last(outbound.dists)]] as const) {
      const n = Math.max(1, Math.round((to - from) / between(r, 430, 520)));
      for (let k = from === 0 ? 0 : 1; k <= n; k++) {
        const dist = from + ((to - from) * k) / n;
        if (from === 0 && k === n) {
          lineStops.push({ stop: hub, dist });
          continue;
        }
        const jittered = k === 0 || (from !== 0 && k === n) ? dist : dist + between(r, -60, 60);
        const [lon, lat] = ruler.along(outbound.points, jittered);
        const stop: DemoStop = { stop_id: `${route_id}S${String(lineStops.length + 1).padStart(2, '0')}`, name: nextName(), lon: round6(lon), lat: round6(lat) };
        stops.push(stop);
        lineStops.push({ stop, dist: jittered });
      }
    }
    const inbound = shapeOf(ruler, `${route_id}-1`, [...outbound.points].reverse());
    shapes.push(outbound, inbound);
    const total = last(outbound.dists);
    const patterns = [
      lineStops.map((s) => ({ stop_id: s.stop.stop_id, dist: s.dist })),
      [...lineStops].reverse().map((s) => ({ stop_id: s.stop.stop_id, dist: total - s.dist })),
    ];
    const terminals = [lineStops[lineStops.length - 1]!.stop.name, lineStops[0]!.stop.name];
    for (const service of ['WK', 'SA', 'SU'] as ServiceId[]) {
      const serviceTrips: DemoTrip[] = [];
      for (const direction of [0, 1] as const) {
        const offset = direction === 0 ? 0 : Math.round(between(r, 2, 7)) * 60;
        for (const start of departures(service, def.night, offset + i * 120)) {
          const peak = HEADWAYS[service].some((h) => h.peak && start >= h.from * 3600 && start < h.to * 3600);
          const speed = (def.speedKmh * (peak ? 0.85 : 1)) / 3.6;
          const stop_times = timetable(patterns[direction]!, start, speed);
          serviceTrips.push({
            trip_id: `${route_id}-${service}-${direction}-${hhmm(start)}`,
            route_id, service_id: service, direction_id: direction, shape_id: direction === 0 ? outbound.shape_id : inbound.shape_id,
            headsign: terminals[direction]!, block_id: null, stop_times, frequency: null,
          });
        }
      }
      blocks.push(...chainBlocks(serviceTrips, route_id, service, false));
      trips.push(...serviceTrips);
    }
  });

  // The shuttle between the central square and the railway station, every 10 minutes (frequencies.txt).
  const shuttleId = 'N';
  routes.push({ route_id: shuttleId, short_name: 'N', long_name: 'Navette Gare – Place Centrale', color: '6F2C91', text_color: 'FFFFFF', team_id: 'sud' });
  const station = ruler.destination(center, 2300, 120 + between(r, -15, 15));
  const shuttle = shapeOf(ruler, 'N-0', smooth([center, ...bends(ruler, r, center, station), station], 12));
  const shuttleBack = shapeOf(ruler, 'N-1', [...shuttle.points].reverse());
  shapes.push(shuttle, shuttleBack);
  const middle = ruler.along(shuttle.points, last(shuttle.dists) / 2);
  const mid: DemoStop = { stop_id: 'NS02', name: nextName(), lon: round6(middle[0]), lat: round6(middle[1]) };
  const gare: DemoStop = { stop_id: 'GARE', name: 'Gare Lumière', lon: round6(station[0]), lat: round6(station[1]) };
  stops.push(mid, gare);
  const length = last(shuttle.dists);
  const shuttlePatterns = [
    [{ stop_id: hub.stop_id, dist: 0 }, { stop_id: mid.stop_id, dist: length / 2 }, { stop_id: gare.stop_id, dist: length }],
    [{ stop_id: gare.stop_id, dist: 0 }, { stop_id: mid.stop_id, dist: length / 2 }, { stop_id: hub.stop_id, dist: length }],
  ];
  for (const service of ['WK', 'SA', 'SU'] as ServiceId[]) {
    const window = service === 'SU' ? { start: 8 * 3600, end: 21 * 3600 } : { start: 6 * 3600, end: 22 * 3600 };
    const templates: DemoTrip[] = ([0, 1] as const).map((direction) => ({
      trip_id: `N-${service}-${direction}`,
      route_id: shuttleId, service_id: service, direction_id: direction, shape_id: direction === 0 ? shuttle.shape_id : shuttleBack.shape_id,
      headsign: direction === 0 ? gare.name : hub.name, block_id: null,
      stop_times: timetable(shuttlePatterns[direction]!, 0, 16 / 3.6),
      frequency: { start: window.start + direction * 600, end: window.end + direction * 600, headway_secs: 1200 },
    }));
    blocks.push(...chainBlocks(templates.flatMap(instancesOf), shuttleId, service, true));
    trips.push(...templates);
  }
  return { seed, timezone: DEMO_TIMEZONE, center, stops, routes, shapes, trips, blocks, railStop: gare.stop_id, hubStop: hub.stop_id };
}

/** The instances of a frequency template as trips of their own (for blocks and the simulator). */
export function instancesOf(t: DemoTrip): DemoTrip[] {
  if (!t.frequency) return [t];
  const out: DemoTrip[] = [];
  for (let s = t.frequency.start; s < t.frequency.end; s += t.frequency.headway_secs) {
    out.push({ ...t, frequency: null, stop_times: t.stop_times.map((st) => ({ ...st, arrival: st.arrival + s, departure: st.departure + s })) });
  }
  return out;
}

/** The day type of a service date: weekdays, Saturdays, and Sundays and public holidays. */
export function serviceOf(date: string): ServiceId {
  if (holidays(Number(date.slice(0, 4))).includes(date)) return 'SU';
  const weekday = DateTime.fromISO(date).weekday;
  return weekday === 7 ? 'SU' : weekday === 6 ? 'SA' : 'WK';
}

/** Fixed-date French public holidays of a year (calendar_dates.txt moves them to the Sunday service). */
export function holidays(year: number): string[] {
  return ['01-01', '05-01', '05-08', '07-14', '08-15', '11-01', '11-11', '12-25'].map((d) => `${year}-${d}`);
}

function departures(service: ServiceId, night: boolean, offset: number): number[] {
  const out: number[] = [];
  for (const h of HEADWAYS[service]) {
    const to = !night && h.to > 24 ? 23.5 : h.to;
    for (let t = h.from * 3600 + offset; t < to * 3600 + offset; t += h.minutes * 60) {
      if (out.length === 0 || t > out[out.length - 1]!) out.push(Math.round(t / 60) * 60);
    }
  }
  return out;
}

/** Stop times of one trip: running at `speed` m/s, 20 s at each stop, a minute at the timepoints. */
function timetable(pattern: { stop_id: string; dist: number }[], start: number, speed: number): DemoStopTime[] {
  let t = start;
  return pattern.map((p, i) => {
    if (i > 0) t += Math.round((p.dist - pattern[i - 1]!.dist) / speed);
    const timepoint = i === 0 || i === pattern.length - 1 || p.stop_id === 'HUB';
    const dwell = i === 0 || i === pattern.length - 1 ? 0 : timepoint ? 60 : 20;
    const arrival = t;
    t += dwell;
    return { stop_id: p.stop_id, stop_sequence: i + 1, arrival, departure: t, dist: Math.round(p.dist * 10) / 10, timepoint };
  });
}

/**
 * Blocks: each trip goes to the vehicle of the route that became free earliest at the trip's
 * first stop (with a layover of at least 4 minutes), or to a new vehicle. A block whose trips run
 * both before and after the relief time is split between two drivers.
 */
function chainBlocks(trips: DemoTrip[], routeId: string, service: ServiceId, frequencyInstances: boolean): DemoBlock[] {
  const blocks: (DemoBlock & { freeAt: number; at: string })[] = [];
  const sorted = [...trips].sort((a, b) => a.stop_times[0]!.departure - b.stop_times[0]!.departure);
  for (const trip of sorted) {
    const first = trip.stop_times[0]!;
    const lastStop = last(trip.stop_times);
    const free = blocks.filter((b) => b.at === first.stop_id && b.freeAt + LAYOVER_MIN <= first.departure).sort((a, b) => a.freeAt - b.freeAt)[0];
    const block = free ?? (() => {
      const b = { block_id: `${routeId}-${service}-${String(blocks.length + 1).padStart(2, '0')}`, service_id: service, route_id: routeId, trips: [], freeAt: 0, at: first.stop_id };
      blocks.push(b);
      return b;
    })();
    block.trips.push({ trip_id: trip.trip_id, start: first.departure, end: lastStop.arrival, start_time: frequencyInstances ? first.departure : null, shift: first.departure >= RELIEF_AT ? 1 : 0 });
    if (!frequencyInstances) trip.block_id = block.block_id;
    block.freeAt = lastStop.arrival;
    block.at = lastStop.stop_id;
  }
  return blocks.map(({ freeAt: _f, at: _a, ...b }) => b);
}

/** Two or three bends between two points, pushed sideways, so lines curve as streets do. */
function bends(ruler: CheapRuler, r: Rng, from: LonLat, to: LonLat): LonLat[] {
  const n = intBetween(r, 1, 2);
  const bearing = ruler.bearing(from, to);
  const length = ruler.distance(from, to);
  const out: LonLat[] = [];
  for (let k = 1; k <= n; k++) {
    const onLine = ruler.destination(from, (length * k) / (n + 1), bearing);
    out.push(ruler.destination(onLine, between(r, -450, 450), bearing + 90));
  }
  return out;
}

/** A Catmull-Rom curve through the control points, `per` points per span. */
function smooth(controls: LonLat[], per: number): LonLat[] {
  const p = [controls[0]!, ...controls, last(controls)];
  const out: LonLat[] = [];
  for (let i = 1; i < p.length - 2; i++) {
    for (let s = 0; s < per; s++) {
      const t = s / per;
      out.push([cr(p[i - 1]![0], p[i]![0], p[i + 1]![0], p[i + 2]![0], t), cr(p[i - 1]![1], p[i]![1], p[i + 1]![1], p[i + 2]![1], t)]);
    }
  }
  out.push(last(controls));
  return out.map(([lon, lat]) => [round6(lon), round6(lat)]);
}

const cr = (a: number, b: number, c: number, d: number, t: number) =>
  0.5 * (2 * b + (-a + c) * t + (2 * a - 5 * b + 4 * c - d) * t * t + (-a + 3 * b - 3 * c + d) * t * t * t);

function shapeOf(ruler: CheapRuler, shape_id: string, points: LonLat[]): DemoShape {
  const dists = [0];
  for (let i = 1; i < points.length; i++) dists.push(dists[i - 1]! + ruler.distance(points[i - 1]!, points[i]!));
  return { shape_id, points, dists: dists.map((d) => Math.round(d * 10) / 10) };
}

function alongOf(ruler: CheapRuler, shape: DemoShape, p: LonLat): number {
  const { index, point } = ruler.pointOnLine(shape.points, p);
  return shape.dists[index]! + ruler.distance(shape.points[index]!, point);
}

function shuffled<T>(r: Rng, list: readonly T[]): T[] {
  const out = [...list];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(r() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

const last = <T>(a: readonly T[]): T => a[a.length - 1]!;
const round6 = (x: number) => Math.round(x * 1e6) / 1e6;
const hhmm = (s: number) => `${String(Math.floor(s / 3600)).padStart(2, '0')}${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}`;

