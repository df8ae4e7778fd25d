import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { ADMIN, ALL_ROLES, groupRoles, publicAccess } from '../../../platform/http/access.js';
import { GroupId, GroupParams } from '../../../platform/http/params.js';
import { DEFAULT_LIMIT, decodeCursor, page } from '../../../platform/http/paging.js';
import { Paging } from '../../../platform/http/periods.js';
import { INTERNAL, PUBLIC, op } from '../../../platform/http/route.js';
import { ref } from '../../../platform/http/components.js';
import { CreateRailStationLink, RailStation, RailStationLink, StationId } from './schemas.js';
import { createLink, deleteLink, getStation, listLinks, searchStations } from './service.js';

const RAIL = ['rail_data'] as const;

export async function railRoutes(fastify: FastifyInstance) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const ctx = app.ctx;

  // spec: the rail-station referential is open data attached to no group, read without credential.
  app.get('/rail-stations', {
    schema: op(
      {
        operationId: 'listRailStations', summary: 'The rail-station referential: list, or search by name or code', tags: ['rail'], access: publicAccess(), documents: PUBLIC,
        description: 'Ordered by name. `q` keeps the stations whose name contains it or whose code equals it (both case-insensitive). Paged: the next page is in the Link header (rel="next"). The referential is loaded with `transit-ops rail-stations import FILE.csv`.',
      },
      {
        querystring: Type.Object({ q: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'Part of the name, or the whole code.' })), ...Paging }),
        response: { 200: Type.Array(ref(RailStation)) },
      },
    ),
  }, async (req, reply) => {
    const limit = req.query.limit ?? DEFAULT_LIMIT;
    const rows = await searchStations(ctx.db, { q: req.query.q, limit, after: decodeCursor(req.query.cursor, 2) });
    return page(req, reply, rows, limit, (s) => [s.name, s.station_id]);
  });

  app.get('/rail-stations/:station_id', {
    schema: op(
      { operationId: 'getRailStation', summary: 'One station of the rail-station referential', tags: ['rail'], access: publicAccess(), documents: PUBLIC, errors: { 404: { RailStationNotFound: 'no station has this station_id' } } },
      { params: Type.Object({ station_id: StationId }), response: { 200: ref(RailStation) } },
    ),
  }, async (req) => getStation(ctx.db, req.params.station_id));

  app.get('/groups/:group_id/rail/station-links', {
    schema: op(
      { operationId: 'listRailStationLinks', summary: 'Links of network stops to rail stations', tags: ['rail'], access: groupRoles(ALL_ROLES, 'ListRailStationLinksRoleRequired', 'read', RAIL), documents: PUBLIC, description: 'By stop_id. is_orphan: the stop is absent from the GTFS published now.' },
      { params: GroupParams, response: { 200: Type.Array(ref(RailStationLink)) } },
    ),
  }, async (req) => listLinks(ctx.db, req.params.group_id));

  app.post('/groups/:group_id/rail/station-links', {
    schema: op(
      {
        operationId: 'createRailStationLink', summary: 'Link a network stop to a rail station', tags: ['rail'], access: groupRoles(ADMIN, 'CreateRailStationLinkRoleRequired', 'write', RAIL), documents: INTERNAL,
        errors: { 409: { RailStationLinkExists: 'the stop is already linked to this station' } },
        description: 'The station must be in the referential (422 otherwise). A stop absent from the published GTFS is accepted and flagged is_orphan. A stop may be linked to several stations.',
      },
      { params: GroupParams, body: ref(CreateRailStationLink), response: { 201: ref(RailStationLink) } },
    ),
  }, async (req, reply) => reply.status(201).send(await createLink(ctx, req.params.group_id, req.body)));

  app.delete('/groups/:group_id/rail/station-links/:stop_id/:station_id', {
    schema: op(
      { operationId: 'deleteRailStationLink', summary: 'Remove the link of a stop to a station', tags: ['rail'], access: groupRoles(ADMIN, 'DeleteRailStationLinkRoleRequired', 'write', RAIL), documents: INTERNAL, errors: { 404: { RailStationLinkNotFound: 'the stop is not linked to this station' } } },
      { params: Type.Object({ group_id: GroupId, stop_id: Type.String({ minLength: 1, maxLength: 255 }), station_id: StationId }), response: { 204: Type.Null({ description: 'Removed' }) } },
    ),
  }, async (req, reply) => {
    await deleteLink(ctx, req.params.group_id, req.params.stop_id, req.params.station_id);
    return reply.status(204).send(null);
  });
}
