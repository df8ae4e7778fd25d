/** The teams table: the only place that reads or writes it (docs/architecture.md). */
import type { Queryable } from '../../../platform/db/index.js';

export interface TeamRow {
  group_id: string;
  team_id: string;
  name: string;
  created_at: Date;
}

/** The new team, or null when its id is taken in the group. */
export async function insertTeam(db: Queryable, groupId: string, t: { team_id: string; name: string }, now: Date): Promise<TeamRow | null> {
  const rows = await db.query<TeamRow>(
    `INSERT INTO teams (group_id, team_id, name, created_at) VALUES ($1, $2, $3, $4)
     ON CONFLICT (group_id, team_id) DO NOTHING
     RETURNING group_id, team_id, name, created_at`,
    [groupId, t.team_id, t.name, now],
  );
  return rows[0] ?? null;
}

export function selectTeams(db: Queryable, groupId: string): Promise<TeamRow[]> {
  return db.query<TeamRow>('SELECT group_id, team_id, name, created_at FROM teams WHERE group_id = $1 ORDER BY team_id', [groupId]);
}

/** The ids of `teams` that the group has. */
export async function selectTeamIds(db: Queryable, groupId: string, teams: readonly string[]): Promise<string[]> {
  const rows = await db.query<{ team_id: string }>('SELECT team_id FROM teams WHERE group_id = $1 AND team_id = ANY($2)', [groupId, [...teams]]);
  return rows.map((r) => r.team_id);
}
