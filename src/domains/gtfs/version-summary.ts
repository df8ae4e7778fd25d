/** A GTFS version as other domains name it (the trip object's gtfs): its name and first publication. */
import type { Queryable } from '../../platform/db/index.js';
import { selectVersionSummary, type VersionSummaryRow } from './queries/version-summary.js';

/** The version's id, name and first publication time: one row, none if the group does not hold it. */
export function versionSummary(db: Queryable, groupId: string, gtfsId: string): Promise<VersionSummaryRow[]> {
  return selectVersionSummary(db, groupId, gtfsId);
}
