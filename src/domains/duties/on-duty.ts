/** The duties open now, as the live map shows them (read model: duties/queries/on-duty.ts). */
import type { Queryable } from '../../platform/db/index.js';
import type { GroupScope } from '../../platform/http/access.js';
import { teamParam } from '../../platform/http/teams.js';
import { selectOpenDutiesWithPositions, type OpenDutyRow } from './queries/on-duty.js';

export type { OpenDutyRow };

/**
 * The duties not signed off and signed on since `since`, with their device's last position, seen
 * by the scope's teams (a duty is visible when its vehicle's or its driver's teams meet them; the
 * other of the two, when of another team, is named by id only).
 */
export function openDutiesWithPositions(db: Queryable, scope: GroupScope, since: Date): Promise<OpenDutyRow[]> {
  return selectOpenDutiesWithPositions(db, scope.groupId, since, teamParam(scope));
}
