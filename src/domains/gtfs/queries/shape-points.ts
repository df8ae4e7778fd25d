/** The points of every shape of a GTFS version, streamed (gtfs_shapes: docs/architecture.md). */
import type { Db } from '../../../platform/db/index.js';

export interface ShapePointRow {
  shape_id: string;
  lat: number;
  lon: number;
}

/** The points of the shapes of a version, by shape and sequence, in batches read from a cursor. */
export function streamShapePoints(db: Db, groupId: string, gtfsId: string): AsyncIterable<ShapePointRow[]> {
  return db.stream<ShapePointRow>(
    'SELECT shape_id, shape_pt_lat AS lat, shape_pt_lon AS lon FROM gtfs_shapes WHERE group_id = $1 AND gtfs_id = $2 ORDER BY shape_id, shape_pt_sequence',
    [groupId, gtfsId],
  );
}
