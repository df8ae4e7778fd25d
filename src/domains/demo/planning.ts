/**
 * Who operates what in the demo network: block k of a day type is driven by vehicle k, its
 * trips before the relief by driver 2k and after it by driver 2k+1. Vehicles, drivers and
 * devices have identifiers derived from their index, so the loader and the simulator (which
 * only speaks HTTP) agree on them without reading each other's data.
 */
import { formatGtfsTime } from '../gtfs/time.js';
import { serviceOf, type DemoNetwork } from './network.js';

export const vehicleIdOf = (k: number) => `bus-${101 + k}`;
export const deviceIdOf = (k: number) => `tab-${101 + k}`;
export const staffNumberOf = (j: number) => `M${1001 + j}`;

/** Vehicles and drivers the busiest day type needs, plus spares. */
export function fleetSize(n: DemoNetwork): { vehicles: number; drivers: number } {
  const blocks = Math.max(...(['WK', 'SA', 'SU'] as const).map((s) => n.blocks.filter((b) => b.service_id === s).length));
  return { vehicles: blocks + 5, drivers: 2 * blocks + 8 };
}

export interface DemoAssignment {
  trip_id: string;
  date: string;
  start_time?: string;
  vehicle_id: string;
  staff_number: string;
}

/** The planning of a service date (YYYY-MM-DD), in the body shape of PUT planning. */
export function demoAssignments(n: DemoNetwork, serviceDate: string): DemoAssignment[] {
  const service = serviceOf(serviceDate);
  const date = serviceDate.replaceAll('-', '');
  return n.blocks
    .filter((b) => b.service_id === service)
    .flatMap((b, k) =>
      b.trips.map((t) => ({
        trip_id: t.trip_id,
        date,
        ...(t.start_time !== null ? { start_time: formatGtfsTime(t.start_time) } : {}),
        vehicle_id: vehicleIdOf(k),
        staff_number: staffNumberOf(2 * k + t.shift),
      })),
    );
}
