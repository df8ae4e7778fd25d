import { Type, type Static } from 'typebox';
import { Nullable, StringEnum } from '../../platform/http/params.js';
import { component, ref } from '../../platform/http/components.js';
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

export const GtfsProblem = component('GtfsProblem', Type.Object(
  {
    file: Type.String({ description: 'The file of the archive (stops.txt…).' }),
    line: Nullable(Type.Integer({ minimum: 1, description: 'Line in the file, the header being line 1; null for a problem of the whole file.' })),
    field: Nullable(Type.String({ description: 'The column, when the problem is in one.' })),
    code: ProblemCode,
    message: Type.String({ description: 'What is wrong, for people.' }),
    value: Type.Optional(Type.String({ description: 'The offending value (at most 200 characters).' })),
  },
  { additionalProperties: false, title: 'GtfsProblem', description: 'A problem found in a GTFS feed at import.' },
));

const Counts = Type.Record(Type.String(), Type.Integer(), { description: 'Rows imported per file, by file name without .txt (stop_times, trips…).', examples: [{ agency: 1, stops: 120, routes: 12, trips: 3400, stop_times: 81000 }] });

export const GtfsImportResult = component('GtfsImportResult', Type.Object(
  {
    gtfs_id: Type.String({ description: 'The new version\'s identifier (24 hexadecimal characters).' }),
    name: Type.String({ description: 'The version\'s name.' }),
    status: StringEnum(['imported', 'published'] as const, { description: 'imported: not published; published: the group had no published GTFS and this version became it.' }),
    imported_at: Type.String({ format: 'date-time' }),
    publication_date: Nullable(Type.String({ format: 'date-time', description: 'When the version was published; null if not.' })),
    counts: Counts,
    warnings: Type.Array(ref(GtfsProblem), { description: 'The first warnings (GTFS_MAX_LISTED_PROBLEMS); warning_count has them all.' }),
    warning_count: Type.Integer({ minimum: 0, description: 'The number of warnings.' }),
    warning_counts: Type.Record(Type.String(), Type.Integer({ minimum: 0 }), { description: 'Warnings per code.' }),
  },
  { additionalProperties: false, title: 'GtfsImportResult', description: 'A GTFS feed imported as a new version.' },
));
export type GtfsImportResult = Static<typeof GtfsImportResult>;

export const FeedInfo = component('GtfsFeedInfo', Type.Object(
  Object.fromEntries(['feed_publisher_name', 'feed_publisher_url', 'feed_lang', 'default_lang', 'feed_start_date', 'feed_end_date', 'feed_version', 'feed_contact_email', 'feed_contact_url']
    .map((f) => [f, Type.Optional(Type.String({ description: `feed_info.txt's ${f}, as written in the feed (absent when empty).` }))])),
  { additionalProperties: false, description: 'The row of feed_info.txt (its non-empty fields, as written in the feed).' },
));

export const GtfsVersionRecord = component('GtfsVersion', Type.Object(
  {
    id: Type.String({ description: 'The gtfs_id.' }),
    name: Type.String({ description: 'The version\'s name.' }),
    status: GtfsStatus,
    publication_date: Nullable(Type.String({ format: 'date-time', description: 'When the version was last published; null if never.' })),
    imported_at: Type.String({ format: 'date-time' }),
    counts: Counts,
    warning_count: Type.Integer({ minimum: 0, description: 'The number of warnings of the import.' }),
    feed_info: Nullable(ref(FeedInfo)),
  },
  { additionalProperties: false, title: 'GtfsVersion', description: 'A GTFS version of the group (an imported feed).' },
));
export type GtfsVersionRecord = Static<typeof GtfsVersionRecord>;

const DateString = Type.String({ format: 'date', description: 'YYYY-MM-DD' });

export const CalendarRecord = component('GtfsCalendar', Type.Object(
  {
    service_id: Type.String({ description: 'The service, within the GTFS version.' }),
    monday: Type.Boolean(),
    tuesday: Type.Boolean(),
    wednesday: Type.Boolean(),
    thursday: Type.Boolean(),
    friday: Type.Boolean(),
    saturday: Type.Boolean(),
    sunday: Type.Boolean(),
    start_date: Nullable(Type.String({ format: 'date', description: 'First date of the range (YYYY-MM-DD), null without a calendar.txt row.' })),
    end_date: Nullable(Type.String({ format: 'date', description: 'Last date of the range, included (YYYY-MM-DD), null without a calendar.txt row.' })),
    added_dates: Type.Array(DateString, { description: 'calendar_dates.txt, exception_type 1.' }),
    removed_dates: Type.Array(DateString, { description: 'calendar_dates.txt, exception_type 2.' }),
    dates: Type.Array(DateString, { description: 'Every service date the service runs on, ascending: the weekdays of the date range, plus the added dates, minus the removed ones.' }),
  },
  {
    additionalProperties: false,
    title: 'GtfsCalendar',
    description:
      'A service of the GTFS version: its calendar.txt row (weekdays and date range; all false and null dates when the service is defined by calendar_dates.txt only), its exceptions, and the dates it runs on. Dates are YYYY-MM-DD.',
  },
));
export type CalendarRecord = Static<typeof CalendarRecord>;
