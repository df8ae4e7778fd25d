import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import multipart from '@fastify/multipart';
import { Type } from 'typebox';
import { ADMIN, ALL_ROLES, groupRoles, publicAccess } from '../../platform/http/access.js';
import { GroupId, GroupParams, Nullable } from '../../platform/http/params.js';
import { INTERNAL, PUBLIC, op } from '../../platform/http/route.js';
import { ref } from '../../platform/http/components.js';
import { importGtfs } from './import/importer.js';
import { CalendarRecord, GtfsId, GtfsImportResult, GtfsVersionRecord } from './schemas.js';
import { getCalendar, listCalendars, listVersions, publishGtfs, requireVersion } from './service.js';
import { ZIP_TYPES, receiveUpload } from './upload.js';

const CalendarParams = Type.Object({ group_id: GroupId, gtfs_id: GtfsId });
const VersionParams = CalendarParams;
const gtfsNotFound = { 404: { GtfsNotFound: 'gtfs_id names no GTFS version of the group' } } as const;

const IMPORT_DESCRIPTION = [
  'Imports a GTFS feed as a new version of the group; the published GTFS does not change until POST …/publish.',
  'The body is the zip itself (`application/zip`; `application/x-zip-compressed` and `application/octet-stream` are read the same) with an optional `name` query parameter, or a `multipart/form-data` form with one file and an optional `name` field.',
  'Files read: agency, stops, routes, trips, stop_times, calendar and/or calendar_dates (at least one of the two), shapes, frequencies, transfers, feed_info; any other entry is ignored and listed in the warnings. Times past 24:00:00 are valid.',
  'The import is one transaction: a refused or failed import leaves nothing. Fatal errors (missing file or column, unknown references, bad times or dates, duplicate keys) answer 422 `InvalidGtfsFeed` with `errors` (the first GTFS_MAX_LISTED_PROBLEMS, each with file, line, field, code, message, value), `error_count`, `error_counts` per code, and the warnings; minor problems are warnings in the 201 answer (the value dropped or the row skipped).',
  'Archive limits (configuration): GTFS_MAX_UPLOAD_BYTES (413 `PayloadTooLarge`), GTFS_MAX_UNCOMPRESSED_BYTES, GTFS_MAX_COMPRESSION_RATIO and GTFS_MAX_ENTRIES (413 `GtfsArchiveTooLarge`); a body that is not a zip, an entry with an absolute or `..` path, an encrypted entry: 400 `InvalidGtfsArchive`.',
].join('\n\n');

/**
 * The upload, documented per content type. The body reaches the handler as a stream (raw zip) or
 * is read by the handler (multipart): the schemas carry no type, as OpenAPI 3.1 writes binary
 * content, and so accept whatever the parser hands over.
 */
const UPLOAD_BODY = {
  content: {
    ...Object.fromEntries(ZIP_TYPES.map((t) => [t, { schema: { description: 'The GTFS zip itself (binary).' } }])),
    'multipart/form-data': { schema: { description: 'A form holding the GTFS zip as its one file part, and optionally a `name` field.' } },
  },
};

export async function gtfsRoutes(fastify: FastifyInstance) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const ctx = app.ctx;
  const limits = ctx.config.gtfs;

  // The upload is streamed to disk by the handler (upload.ts): the raw body is handed over as it comes.
  app.addContentTypeParser(ZIP_TYPES, (_req, payload, done) => done(null, payload));
  await app.register(multipart, { limits: { files: 1, fileSize: limits.maxUploadBytes, fields: 10, parts: 12 } });

  app.post('/groups/:group_id/gtfs', {
    schema: op(
      {
        operationId: 'importGtfs', summary: 'Import a GTFS feed (zip) as a new version', description: IMPORT_DESCRIPTION, tags: ['gtfs'],
        access: groupRoles(ADMIN, 'ImportGtfsRoleRequired', 'admin'), documents: INTERNAL, consumes: [...ZIP_TYPES, 'multipart/form-data'],
        errors: {
          400: { InvalidGtfsArchive: 'the body is not a readable zip archive, or holds an unsafe or encrypted entry' },
          413: { PayloadTooLarge: 'the upload is over GTFS_MAX_UPLOAD_BYTES', GtfsArchiveTooLarge: 'the archive expands past the limits (zip bomb)' },
          415: { UnsupportedMediaType: 'the body is neither a zip nor a multipart form' },
          422: { InvalidGtfsFeed: 'the feed has fatal errors, listed in `errors`' },
        },
      },
      {
        params: GroupParams,
        querystring: Type.Object({ name: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'A name for the version (default: the form\'s name field, the file name, or feed_info\'s feed_version).' })) }),
        body: UPLOAD_BODY,
        response: { 201: ref(GtfsImportResult) },
      },
    ),
  }, async (req, reply) => {
    const upload = await receiveUpload(req, limits.maxUploadBytes);
    let result;
    try {
      result = await importGtfs(ctx, req.params.group_id, upload.path, { name: req.query.name ?? upload.name, importedBy: req.principal?.userId ?? null });
    } finally {
      await upload.discard();
    }
    return reply.status(201).send(result);
  });

  app.get('/groups/:group_id/gtfs', {
    schema: op(
      { operationId: 'listGtfsVersions', summary: 'The GTFS versions of the group, latest import first', tags: ['gtfs'], access: groupRoles(ALL_ROLES, 'ListGtfsRoleRequired', 'read'), documents: INTERNAL },
      { params: GroupParams, response: { 200: Type.Array(ref(GtfsVersionRecord)) } },
    ),
  }, async (req) => listVersions(ctx.db, req.params.group_id));

  app.get('/groups/:group_id/gtfs/:gtfs_id', {
    schema: op(
      { operationId: 'getGtfsVersion', summary: 'One GTFS version of the group', tags: ['gtfs'], access: groupRoles(ALL_ROLES, 'GetGtfsRoleRequired', 'read'), documents: INTERNAL, errors: gtfsNotFound },
      { params: VersionParams, response: { 200: ref(GtfsVersionRecord) } },
    ),
  }, async (req) => requireVersion(ctx.db, req.params.group_id, req.params.gtfs_id));

  app.post('/groups/:group_id/gtfs/:gtfs_id/publish', {
    schema: op(
      {
        operationId: 'publishGtfs', summary: 'Make a version the group\'s published GTFS from now on', tags: ['gtfs'], access: groupRoles(ADMIN, 'PublishGtfsRoleRequired', 'admin'), documents: INTERNAL, errors: gtfsNotFound,
        description:
          'The version becomes the published GTFS now; its publication_date is now. Earlier versions stay readable. The version in force on a service date is the one published last on or before that date (dates of publication in the group\'s time zone; before the first publication, the first published version). Publishing the version already published changes nothing; publishing an earlier version again adds a publication (the past keeps its versions). Rail station links are re-flagged (is_orphan) against the new version.',
      },
      { params: VersionParams, response: { 200: ref(GtfsVersionRecord) } },
    ),
  }, async (req) => publishGtfs(ctx, req.params.group_id, req.params.gtfs_id, req.principal?.userId ?? null));

  app.get('/groups/:group_id/gtfs/:gtfs_id/calendars', {
    schema: op(
      {
        operationId: 'listGtfsCalendars', summary: 'The calendars (services) of a GTFS version', tags: ['gtfs'], access: publicAccess({ group: true }), documents: PUBLIC,
        errors: { 422: { InvalidGTFSId: 'gtfs_id names no GTFS version of the group' } },
        description: 'Every service_id of calendar.txt and calendar_dates.txt, by service_id. `published` as gtfs_id reads the version published now.',
      },
      { params: CalendarParams, response: { 200: Type.Array(ref(CalendarRecord)) } },
    ),
  }, async (req) => listCalendars(ctx.db, req.params.group_id, req.params.gtfs_id));

  app.get('/groups/:group_id/gtfs/:gtfs_id/calendars/:service_id', {
    schema: op(
      {
        operationId: 'getGtfsCalendar', summary: 'One calendar of a GTFS version, or null', tags: ['gtfs'], access: publicAccess({ group: true }), documents: PUBLIC,
        errors: { 404: { GtfsCalendarNotFound: 'gtfs_id names no GTFS version of the group' } },
        description: 'The calendar of service_id, or `null` when the version (which exists) has no such service.',
      },
      { params: Type.Object({ group_id: GroupId, gtfs_id: GtfsId, service_id: Type.String({ minLength: 1, maxLength: 255 }) }), response: { 200: Nullable(ref(CalendarRecord)) } },
    ),
  }, async (req) => getCalendar(ctx.db, req.params.group_id, req.params.gtfs_id, req.params.service_id));
}
