/**
 * The ratings table: the only place that reads or writes it (docs/architecture.md). The lists are
 * read models: a rating is seen through its driver, so they read the drivers' teams (fleet's
 * table) in the same statement.
 */
import type { Queryable } from '../../platform/db/index.js';
import { teamsVisibleSql } from '../../platform/http/teams.js';

export interface RatingRow {
  driver_id: string;
  driver_version: string;
  score: number;
  comment: string | null;
  created_at: Date;
  updated_at: Date;
}

const COLUMNS = 'r.driver_id, r.driver_version, r.score, r.comment, r.created_at, r.updated_at';

export async function selectRating(db: Queryable, groupId: string, driverId: string, driverVersion: string): Promise<RatingRow | null> {
  const rows = await db.query<RatingRow>(`SELECT ${COLUMNS} FROM ratings r WHERE r.group_id = $1 AND r.driver_id = $2 AND r.driver_version = $3`, [groupId, driverId, driverVersion]);
  return rows[0] ?? null;
}

/** Creates the rating of (driver, version), or replaces its score and comment (created_at kept). */
export async function upsertRating(db: Queryable, groupId: string, r: Pick<RatingRow, 'driver_id' | 'driver_version' | 'score' | 'comment'>, now: Date): Promise<RatingRow> {
  const rows = await db.query<RatingRow>(
    `INSERT INTO ratings AS r (group_id, driver_id, driver_version, score, comment, created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, $6)
     ON CONFLICT (group_id, driver_id, driver_version) DO UPDATE SET score = EXCLUDED.score, comment = EXCLUDED.comment, updated_at = EXCLUDED.updated_at
     RETURNING ${COLUMNS}`,
    [groupId, r.driver_id, r.driver_version, r.score, r.comment, now],
  );
  return rows[0]!;
}

// The ratings of the drivers `$2` sees (null: every team).
const VISIBLE = `FROM ratings r JOIN drivers d ON d.group_id = r.group_id AND d.driver_id = r.driver_id
  WHERE r.group_id = $1 AND ${teamsVisibleSql('d.teams', 2)}`;

export async function selectRatingsAverage(db: Queryable, groupId: string, teams: string[] | null): Promise<{ average: number | null; count: number }> {
  const rows = await db.query<{ average: number | null; count: number }>(`SELECT round(avg(r.score), 2) AS average, count(*) AS count ${VISIBLE}`, [groupId, teams]);
  return rows[0]!;
}

export function selectRatingsByDriverVersion(db: Queryable, groupId: string, teams: string[] | null): Promise<{ driver_version: string; average: number; count: number }[]> {
  return db.query(`SELECT r.driver_version, round(avg(r.score), 2) AS average, count(*) AS count ${VISIBLE} GROUP BY r.driver_version`, [groupId, teams]);
}

export function selectRatings(db: Queryable, groupId: string, teams: string[] | null): Promise<RatingRow[]> {
  return db.query<RatingRow>(`SELECT ${COLUMNS} ${VISIBLE} ORDER BY r.driver_id`, [groupId, teams]);
}
