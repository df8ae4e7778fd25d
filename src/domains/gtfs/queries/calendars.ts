/** The gtfs_calendars and gtfs_calendar_dates tables, read as one calendar per service. */
import type { Queryable } from '../../../platform/db/index.js';

/** A service's calendar: its weekdays (null without a calendar.txt row), date range, and the dates added and removed. */
export interface CalendarRow {
  service_id: string;
  days: boolean[] | null;
  start_date: string | null;
  end_date: string | null;
  added: string[];
  removed: string[];
}

/** The calendars of a version's services (all, or the one named), by service_id. */
export function selectCalendars(db: Queryable, groupId: string, gtfsId: string, serviceId: string | null): Promise<CalendarRow[]> {
  return db.query<CalendarRow>(
    `WITH services AS (
       SELECT service_id FROM gtfs_calendars WHERE group_id = $1 AND gtfs_id = $2 AND ($3::text IS NULL OR service_id = $3)
       UNION
       SELECT service_id FROM gtfs_calendar_dates WHERE group_id = $1 AND gtfs_id = $2 AND ($3::text IS NULL OR service_id = $3)
     ), exceptions AS (
       SELECT service_id,
              array_agg(to_char(date, 'YYYY-MM-DD') ORDER BY date) FILTER (WHERE exception_type = 1) AS added,
              array_agg(to_char(date, 'YYYY-MM-DD') ORDER BY date) FILTER (WHERE exception_type = 2) AS removed
       FROM gtfs_calendar_dates WHERE group_id = $1 AND gtfs_id = $2 AND ($3::text IS NULL OR service_id = $3)
       GROUP BY service_id
     )
     SELECT s.service_id,
            CASE WHEN c.service_id IS NULL THEN NULL ELSE ARRAY[c.monday, c.tuesday, c.wednesday, c.thursday, c.friday, c.saturday, c.sunday] END AS days,
            to_char(c.start_date, 'YYYY-MM-DD') AS start_date, to_char(c.end_date, 'YYYY-MM-DD') AS end_date,
            COALESCE(e.added, '{}') AS added, COALESCE(e.removed, '{}') AS removed
     FROM services s
     LEFT JOIN gtfs_calendars c ON c.group_id = $1 AND c.gtfs_id = $2 AND c.service_id = s.service_id
     LEFT JOIN exceptions e ON e.service_id = s.service_id
     ORDER BY s.service_id`,
    [groupId, gtfsId, serviceId],
  );
}
