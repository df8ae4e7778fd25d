import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { publicAccess } from '../../../platform/http/access.js';
import { GroupParams, StringEnum } from '../../../platform/http/params.js';
import { PUBLIC, op } from '../../../platform/http/route.js';
import { sendOutput, type FeedCache } from '../cache.js';
import { BLOCK_HORIZON_SECONDS } from '../../predictions/service.js';
import { PAST_TRIP_SECONDS } from '../network.js';
import type { FeedName } from './feeds.js';
import { GtfsRtFeedMessage } from './schemas.js';
import { ref } from '../../../platform/http/components.js';

const ABOUT: Record<FeedName, { operationId: string; summary: string; description: string }> = {
  'trip-updates': {
    operationId: 'gtfsRtTripUpdates',
    summary: 'GTFS-Realtime TripUpdates',
    description:
      'Trips of the current service date (and of the previous one while they run) whose vehicle is known: every trip in progress (a vehicle reported on it and it is not over: ' +
      'including a trip about to start whose vehicle reported it while laying over at its first stop, predicted to leave at its scheduled departure at the earliest), on time or not, ' +
      `the next trips of its block starting within ${BLOCK_HORIZON_SECONDS / 3600} hours; and the trips an update in force or a reported delay concerns. ` +
      'A trip whose vehicle is not known yet has no trip update (consumers read the schedule; SIRI EstimatedTimetable lists those within FEEDS_ET_HORIZON_MINUTES as not monitored). ' +
      'Predicted trips (docs/predictions.md: one computation per refresh, shared with SIRI and the trip object): a stop time update for every stop ahead with `arrival.time`, `departure.time` and their `uncertainty` (seconds); ' +
      'stops already passed are left out; stop_sequence strictly increasing, times never decreasing; `delay` is the delay observed at the last stop passed when known; ' +
      '`timestamp` is when the vehicle was last seen at a stop (for a next trip of a block, on the trip it runs now), never later than the header timestamp. ' +
      'A cancelled trip: schedule_relationship CANCELED. A skipped stop: a SKIPPED stop time update (by stop_sequence). A trip with a delay and no prediction (a frequency trip, a trip just over): the stop time update of the latest stop a device reported, ' +
      '`delay` seconds (consumers propagate it downstream). A trip whose stops are replaced or added (detour, moved or added stop) is published as a modified trip: ' +
      '`trip.modified_trip` names its TripModifications entity (trip-modifications feed) and the added stops carry their expected times (no other stop ahead). ' +
      `A trip leaves the feed ${PAST_TRIP_SECONDS / 60} minutes after its scheduled last arrival plus its delay. Entity id: \`trip:<YYYYMMDD>:<trip_id>[:<start_time>]\`.`,
  },
  'vehicle-positions': {
    operationId: 'gtfsRtVehiclePositions',
    summary: 'GTFS-Realtime VehiclePositions',
    description:
      'The latest position of each vehicle: the vehicle of the duty open on the reporting device (else the vehicle the device is mounted in), with its trip when the device reports one known to the GTFS in force. ' +
      'A vehicle unseen for FEEDS_STALE_VEHICLE_SECONDS (default 300 s) drops out. `vehicle.label` is the fleet number; license plates are not published. Entity id: `vehicle:<vehicle_id>`.',
  },
  alerts: {
    operationId: 'gtfsRtAlerts',
    summary: 'GTFS-Realtime Alerts',
    description:
      'One alert per trip update in force with a message, and per detour (a detour without a message gets the header "Detour"). Active period: from the start of its first service day to the start of the day after its last. ' +
      'Cause, effect (default by kind: cancel NO_SERVICE, detour DETOUR, skip and move STOP_MOVED, add ADDITIONAL_SERVICE, message OTHER_EFFECT) and severity come from the message. Entity id: `alert:<update_id>`.',
  },
  'trip-modifications': {
    operationId: 'gtfsRtTripModifications',
    summary: 'GTFS-Realtime TripModifications (experimental), with Shapes and Stops',
    description:
      'Detours, moved and added stops as TripModifications (experimental message of the official proto): one entity per trip and service date, each run of replaced or added stops one modification ' +
      '(replacement stops with their travel time from the stop before), a Shape entity with the detour\'s full path (encoded polyline), a Stop entity for each temporary stop (`tmp-<update_id>-<n>`). ' +
      'Stops skipped without replacement stay in TripUpdates; a stop added after the last stop is not expressible and is left out. Entity ids: `tm:<YYYYMMDD>:<trip_id>[:<start_time>]`, `shape:<shape_id>`, `stop:<stop_id>`.',
  },
};

const COMMON =
  'Passenger information: **no credential** (open data, like the GTFS calendars); the whole network, no team scope. Protobuf (`application/x-protobuf`) by default; `?format=json` gives the same content in protobuf\'s JSON mapping. ' +
  'FULL_DATASET; the header timestamp is when the service read the network (the snapshot\'s build time). Stale-while-revalidate: answered at once from the last snapshot of the group (shared by every feed, GTFS-Realtime and SIRI), never after a rebuild; ' +
  'a snapshot older than FEEDS_REFRESH_SECONDS (default 5 s) is rebuilt in the background by the first request that finds it so (one rebuild at a time per group), and served meanwhile; ' +
  'while any feed of the group was asked for within ten minutes, the service also rebuilds it once stale without waiting for a request (FEEDS_KEEP_FRESH, on by default), so an answer is about an interval plus a rebuild old whatever your polling period. ' +
  'The `Age` header is the snapshot\'s age in seconds. Only the very first request for a group in an instance waits, for the first build. ' +
  'Each feed tells its own snapshot in its header: while a rebuild is late (under way for FEEDS_REFRESH_SECONDS or more), vehicle-positions is refreshed alone from the vehicles\' positions and is then newer than trip-updates; SIRI EstimatedTimetable, built after the GTFS-Realtime feeds, may be one snapshot older than them. ' +
  'A vehicle that reports while a snapshot is read is in that snapshot with its previous position (or, if it had none in the stale window, in the next one). ' +
  'Conditional requests: a weak `ETag` (the content without timestamps) with `If-None-Match`, `Last-Modified` (when the content last changed) with `If-Modified-Since`: 304 when unchanged. ' +
  'A feed of 1 KiB or more comes gzipped (`Content-Encoding: gzip`, `Vary: Accept-Encoding`) to a client whose `Accept-Encoding` accepts gzip.';

export function gtfsRtRoutes(fastify: FastifyInstance, cache: FeedCache) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  for (const feed of Object.keys(ABOUT) as FeedName[]) {
    const about = ABOUT[feed];
    app.get(`/groups/:group_id/gtfs-rt/${feed}`, {
      schema: op(
        { ...about, description: `${about.description}\n\n${COMMON}`, tags: ['gtfs-rt'], access: publicAccess({ group: true }), documents: PUBLIC, produces: ['application/x-protobuf', 'application/json'] },
        {
          params: GroupParams,
          querystring: Type.Object({ format: StringEnum(['protobuf', 'json'] as const, { default: 'protobuf', description: 'protobuf (default) or json.' }) }),
          response: {
            200: {
              description: 'The feed message',
              content: { 'application/x-protobuf': { schema: Type.String({ format: 'binary' }) }, 'application/json': { schema: ref(GtfsRtFeedMessage) } },
            },
            304: { description: 'Not Modified: the client holds the current content', type: 'null' },
          },
        },
      ),
    }, async (req, reply) => {
      const groupId = req.params.group_id;
      const out = await cache.output(groupId, { kind: 'gtfs-rt', feed, format: req.query.format });
      return sendOutput(req, reply, out, app.ctx.config.feeds.refreshSeconds);
    });
  }
}
