import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { ADMIN, OFFICE, groupRoles, publicAccess } from '../../../platform/http/access.js';
import { GroupId, GroupParams } from '../../../platform/http/params.js';
import { INTERNAL, PUBLIC, op } from '../../../platform/http/route.js';
import { ref } from '../../../platform/http/components.js';
import { CreateOnDemandRoute, OnDemandRoute, OnDemandRouteId, PatchOnDemandRoute, PublicOnDemandRoute } from './schemas.js';
import { createRoute, getPublicRoute, getRoute, listPublicRoutes, listRoutes, updateRoute } from './service.js';

const ON_DEMAND = ['device_event_sourcing', 'on_demand'] as const;
const RouteParams = Type.Object({ group_id: GroupId, route_id: Type.String({ minLength: 1, maxLength: 128 }) });
const FEATURES_NOTE = 'A group without both features device_event_sourcing and on_demand answers 403 `FeatureNotEnabled`, before anything else is looked at.';

export async function onDemandRoutes(fastify: FastifyInstance) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const ctx = app.ctx;

  app.get('/groups/:group_id/on-demand-routes/public', {
    schema: op(
      { operationId: 'listPublicOnDemandRoutes', summary: 'Active and inactive on-demand routes', description: `Archived routes are never listed. ${FEATURES_NOTE}`, tags: ['on-demand'], access: publicAccess({ group: true, features: ON_DEMAND }), documents: PUBLIC },
      { params: GroupParams, response: { 200: Type.Array(ref(PublicOnDemandRoute)) } },
    ),
  }, async (req) => listPublicRoutes(ctx.db, req.params.group_id));

  app.get('/groups/:group_id/on-demand-routes/public/:route_id', {
    schema: op(
      {
        operationId: 'getPublicOnDemandRoute', summary: 'One on-demand route (active or inactive)', description: `An archived route answers exactly as an unknown one: same status, same body. ${FEATURES_NOTE}`, tags: ['on-demand'],
        access: publicAccess({ group: true, features: ON_DEMAND }), documents: PUBLIC,
        errors: { 404: { OnDemandRouteNotFound: 'unknown or archived route (indistinguishable by design)' } },
      },
      { params: RouteParams, response: { 200: ref(PublicOnDemandRoute) } },
    ),
  }, async (req) => getPublicRoute(ctx.db, req.params.group_id, req.params.route_id));

  app.post('/groups/:group_id/on-demand-routes', {
    schema: op(
      { operationId: 'createOnDemandRoute', summary: 'Create an on-demand route with its stops', tags: ['on-demand'], access: groupRoles(ADMIN, 'CreateOnDemandRouteRoleRequired', 'write', ON_DEMAND), documents: INTERNAL, errors: { 409: { OnDemandRouteExists: 'the route_id is taken in this group' } } },
      { params: GroupParams, body: ref(CreateOnDemandRoute), response: { 201: ref(OnDemandRoute) } },
    ),
  }, async (req, reply) => reply.status(201).send(await createRoute(ctx, req.params.group_id, req.body)));

  app.get('/groups/:group_id/on-demand-routes', {
    schema: op(
      { operationId: 'listOnDemandRoutes', summary: 'Every on-demand route of the group, archived ones included', tags: ['on-demand'], access: groupRoles(OFFICE, 'ListOnDemandRoutesRoleRequired', 'read', ON_DEMAND), documents: INTERNAL },
      { params: GroupParams, response: { 200: Type.Array(ref(OnDemandRoute)) } },
    ),
  }, async (req) => listRoutes(ctx.db, req.params.group_id));

  app.get('/groups/:group_id/on-demand-routes/:route_id', {
    schema: op(
      { operationId: 'getOnDemandRoute', summary: 'One on-demand route, whatever its status', tags: ['on-demand'], access: groupRoles(OFFICE, 'GetOnDemandRouteRoleRequired', 'read', ON_DEMAND), documents: INTERNAL, errors: { 404: { OnDemandRouteNotFound: 'unknown route' } } },
      { params: Type.Object({ group_id: GroupId, route_id: OnDemandRouteId }), response: { 200: ref(OnDemandRoute) } },
    ),
  }, async (req) => getRoute(ctx.db, req.params.group_id, req.params.route_id));

  app.patch('/groups/:group_id/on-demand-routes/:route_id', {
    schema: op(
      { operationId: 'updateOnDemandRoute', summary: 'Change an on-demand route: status (active, inactive, archived), fields, stops', tags: ['on-demand'], access: groupRoles(ADMIN, 'UpdateOnDemandRouteRoleRequired', 'write', ON_DEMAND), documents: INTERNAL, errors: { 404: { OnDemandRouteNotFound: 'unknown route' } } },
      { params: Type.Object({ group_id: GroupId, route_id: OnDemandRouteId }), body: ref(PatchOnDemandRoute), response: { 200: ref(OnDemandRoute) } },
    ),
  }, async (req) => updateRoute(ctx, req.params.group_id, req.params.route_id, req.body));
}
