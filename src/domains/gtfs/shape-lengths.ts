/** The lengths of the shapes of a GTFS version (the trip tracking statistics' tk). */
import CheapRuler from 'cheap-ruler';
import type { Db } from '../../platform/db/index.js';
import { streamShapePoints, type ShapePointRow } from './queries/shape-points.js';

/** Lengths of the shapes of a GTFS version, km (cheap-ruler). */
export async function shapeLengths(db: Db, groupId: string, gtfsId: string): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  let prev: ShapePointRow | null = null;
  let ruler: CheapRuler | null = null;
  for await (const batch of streamShapePoints(db, groupId, gtfsId)) {
    for (const p of batch) {
      if (!prev || prev.shape_id !== p.shape_id) {
        ruler = new CheapRuler(p.lat, 'kilometers');
        out.set(p.shape_id, 0);
      } else out.set(p.shape_id, out.get(p.shape_id)! + ruler!.distance([prev.lon, prev.lat], [p.lon, p.lat]));
      prev = p;
    }
  }
  return out;
}
