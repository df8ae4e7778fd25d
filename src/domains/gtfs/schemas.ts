import { Type, type Static } from 'typebox';
import { Nullable, StringEnum } from '../../platform/http/params.js';
import { PROBLEM_CODES } from './import/problems.js';

export const GtfsId = Type.String({
  minLength: 1,
  maxLength: 64,
  description: 'A GTFS version of the group, as listed by GET /groups/{group_id}/gtfs (24 hexadecimal characters), or `published` for the version published now.',
});

export const GTFS_STATUSES = ['imported', 'published', 'superseded'] as const;
export const GtfsStatus = StringEnum(GTFS_STATUSES, {
  description: '`imported`: never published; `published`: the group\'s published GTFS now; `superseded`: was published, a later publication replaced it (still readable: history points at it).',
});

const ProblemCode = StringEnum(Object.keys(PROBLEM_CODES) as (keyof typeof PROBLEM_CODES)[], {
  description: Object.entries(PROBLEM_CODES).map(([c, w]) => `\`${c}\`: ${w}`).join('; '),
});

export const GtfsProblem = Type.Object(
  {
    file: Type.String({ description: 'The file of the archive (stops.txt…).' }),
    line: Nullable(Type.Integer({ description: 'Line in the file, the header being line 1; null for a problem of the whole file.' })),
    field: Nullable(Type.String()),
    code: ProblemCode,
    message: Type.String(),
    value: Type.Optional(Type.String({ description: 'The offending value (at most 200 characters).' })),
  },
  { title: 'GtfsProblem' },
);

const Counts = Type.Record(Type.String(), Type.Integer(), { description: 'Rows imported per file, by file name without .txt (stop_times, trips…).', examples: [{ agency: 1, stops: 120, routes: 12, trips: 3400, stop_times: 81000 }] });

export const GtfsImportResult = Type.Object(
  {
    gtfs_id: Type.String(),
    name: Type.String(),
    status: StringEnum(['imported', 'published'] as const),
    imported_at: Type.String({ format: 'date-time' }),
    publication_date: Nullable(Type.String({ format: 'date-time' })),
    counts: Counts,
    warnings: Type.Array(GtfsProblem, { description: 'The first warnings (GTFS_MAX_LISTED_PROBLEMS); warning_count has them all.' }),
    warning_count: Type.Integer(),
    warning_counts: Type.Record(Type.String(), Type.Integer(), { description: 'Warnings per code.' }),
  },
  { title: 'GtfsImportResult' },
);
export type GtfsImportResult = Static<typeof GtfsImportResult>;

export const GtfsVersionRecord = Type.Object(
  {
    id: Type.String({ description: 'The gtfs_id.' }),
    name: Type.String(),
    status: GtfsStatus,
    publication_date: Nullable(Type.String({ format: 'date-time', description: 'When the version was last published; null if never.' })),
    imported_at: Type.String({ format: 'date-time' }),
    counts: Counts,
    warning_count: Type.Integer(),
    feed_info: Nullable(Type.Record(Type.String(), Type.String(), { description: 'The row of feed_info.txt, when the feed has one.' })),
  },
  { title: 'GtfsVersion' },
);
export type GtfsVersionRecord = Static<typeof GtfsVersionRecord>;

const DateString = Type.String({ format: 'date', description: 'YYYY-MM-DD' });

export const CalendarRecord = Type.Object(
  {
    service_id: Type.String(),
    monday: Type.Boolean(),
    tuesday: Type.Boolean(),
    wednesday: Type.Boolean(),
    thursday: Type.Boolean(),
    friday: Type.Boolean(),
    saturday: Type.Boolean(),
    sunday: Type.Boolean(),
    start_date: Nullable(DateString),
    end_date: Nullable(DateString),
    added_dates: Type.Array(DateString, { description: 'calendar_dates.txt, exception_type 1.' }),
    removed_dates: Type.Array(DateString, { description: 'calendar_dates.txt, exception_type 2.' }),
    dates: Type.Array(DateString, { description: 'Every service date the service runs on, ascending: the weekdays of the date range, plus the added dates, minus the removed ones.' }),
  },
  {
    title: 'GtfsCalendar',
    description:
      'A service of the GTFS version: its calendar.txt row (weekdays and date range; all false and null dates when the service is defined by calendar_dates.txt only), its exceptions, and the dates it runs on. Dates are YYYY-MM-DD.',
  },
);
export type CalendarRecord = Static<typeof CalendarRecord>;
