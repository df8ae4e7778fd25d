import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Duration } from 'luxon';
import { Type } from 'typebox';
import { publicAccess } from '../../../platform/http/access.js';
import { invalid } from '../../../platform/http/errors.js';
import { GroupParams } from '../../../platform/http/params.js';
import { PUBLIC, op, type OpMeta } from '../../../platform/http/route.js';
import { getGroup } from '../../groups/service.js';
import { publishedGtfsId } from '../../gtfs/service.js';
import { BLOCK_HORIZON_SECONDS } from '../../predictions/service.js';
import { sendOutput, snapshotAge, type FeedCache } from '../cache.js';
import { checkStatus, linesDiscovery, stopPointsDiscovery } from './build.js';
import { discovery } from './service.js';

const XML = 'application/xml; charset=utf-8';
const Ref = (description: string) => Type.String({ minLength: 1, maxLength: 255, description });
const XmlResponse = { 200: { description: 'A SIRI 2.1 document', content: { 'application/xml': { schema: Type.String() } } }, 304: { description: 'Not Modified', type: 'null' } };
const COMMON =
  'SIRI 2.1 XML (namespace http://www.siri.org.uk/siri), request/response over HTTP GET with the request\'s parameters in the query (SIRI Lite style, the parameter names of the SIRI request). ' +
  '**No credential**: passenger information covers the whole network (no team scope). ProducerRef and ParticipantRef are the group_id; LineRef = route_id; DatedVehicleJourneyRef = trip_id ' +
  '(`trip_id:HH:MM:SS` for a frequency instance) framed by its service date; StopPointRef = stop_id (`tmp-<update_id>-<n>` for a temporary stop); SituationNumber = update_id. ' +
  'Built from the same per-group snapshot as GTFS-Realtime, served at once and rebuilt in the background once older than FEEDS_REFRESH_SECONDS (stale-while-revalidate; while the group\'s feeds are asked for, without waiting for a request: FEEDS_KEEP_FRESH); ResponseTimestamp is when the snapshot was built, the Age header its age in seconds. ' +
  'Each document tells its own snapshot: a rebuild serves GTFS-Realtime and VehicleMonitoring first and builds EstimatedTimetable after them (a city\'s is the largest output by far), so while it is built EstimatedTimetable answers with the one before, one snapshot older (its ResponseTimestamp and Age say so); while a rebuild is late (under way for FEEDS_REFRESH_SECONDS or more) VehicleMonitoring is refreshed alone from the vehicles\' positions, newer than the trips\' documents. ' +
  'A document of 1 KiB or more comes gzipped (`Content-Encoding: gzip`, `Vary: Accept-Encoding`) to a client whose `Accept-Encoding` accepts gzip: a city\'s EstimatedTimetable is tens of megabytes of XML, about a fourteenth of that gzipped. The EstimatedTimetable is kept gzipped only: to a client that does not accept gzip it is sent inflated as it goes, chunked, without `Content-Length`.';

export function siriRoutes(fastify: FastifyInstance, cache: FeedCache) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const ctx = app.ctx;
  const startedAt = ctx.clock.now();
  const base = (operationId: string, summary: string, description: string): OpMeta =>
    ({ operationId, summary, description: `${description}\n\n${COMMON}`, tags: ['siri'], access: publicAccess({ group: true }), documents: PUBLIC, produces: ['application/xml'] });
  const maxAge = () => ctx.config.feeds.refreshSeconds;

  app.get('/groups/:group_id/siri/estimated-timetable', {
    schema: op(
      base('siriEstimatedTimetable', 'SIRI EstimatedTimetable', `The journeys of the current service date (and the previous one while they run): every journey in progress (on time or not), every timetable journey scheduled to run within the horizon ` +
      '(its scheduled run, first departure to last arrival, overlaps [now, now + FEEDS_ET_HORIZON_MINUTES], default 60 minutes; 0 turns it off), whether or not its vehicle is known, ' +
      `the next journeys of the block of a journey in progress starting within ${BLOCK_HORIZON_SECONDS / 3600} hours, and those an update or a reported delay concerns. ` +
      'A cancelled journey (Cancellation); every call in order with aimed and expected times: ExpectedArrivalTime/ExpectedDepartureTime at the calls ahead are the predicted ones (the same computation as GTFS-Realtime TripUpdates, docs/predictions.md), at the calls passed the observed ones; ' +
      'a journey whose vehicle is known (it reported on it, or runs an earlier journey of its block: block propagation) is Monitored true; a journey whose vehicle is not known yet is Monitored false, its expected times predicted from its scheduled departure ' +
      '(the running times learned from the history, else the schedule: with no history, expected = aimed), not held to the clock (nothing says where its vehicle is); it is not in GTFS-Realtime TripUpdates. ' +
      'A journey with a delay and no prediction (a frequency trip): aimed plus the delay, Monitored true. Frequency journeys without a report are not listed. ' +
      'Order (SIRI gives the journeys of a frame none; key them by FramedVehicleJourneyRef): by vehicle, each vehicle\'s journey in progress followed by the next journeys of its block predicted through it, the vehicles in the order of the departures of the journeys they run; then every other journey (Monitored false, or told from a delay or an update alone) by scheduled departure. Calls left out (Cancellation, status cancelled) and extra calls (ExtraCall), the SituationRef of its situations. Filter: LineRef. No journey: 204 No Content (the schema allows no empty delivery). ' +
      'Built with each snapshot of the network by default; an operator of a large network may have it rebuilt only every FEEDS_ET_REFRESH_SECONDS (the other feeds still follow each snapshot): ResponseTimestamp and the `Age` header always tell when the document was built.'),
      { params: GroupParams, querystring: Type.Object({ LineRef: Type.Optional(Ref('Only this line (route_id).')) }), response: { ...XmlResponse, 204: { description: 'No journey to tell: the SIRI 2.1 schema requires at least one journey in an EstimatedTimetableDelivery', type: 'null' } } },
    ),
  }, async (req, reply) => {
    const { group_id: g } = req.params;
    const out = await cache.output(g, { kind: 'siri-et', lineRef: req.query.LineRef });
    if (out.size === 0) return reply.code(204).header('cache-control', `public, max-age=${maxAge()}`).header('age', snapshotAge(req, out.net)).send();
    return sendOutput(req, reply, out, maxAge());
  });

  app.get('/groups/:group_id/siri/vehicle-monitoring', {
    schema: op(
      base('siriVehicleMonitoring', 'SIRI VehicleMonitoring', 'The latest position of each vehicle seen within FEEDS_STALE_VEHICLE_SECONDS (ValidUntilTime: when it would become stale), with its journey when the device reports one. Filters: LineRef, VehicleRef.'),
      { params: GroupParams, querystring: Type.Object({ LineRef: Type.Optional(Ref('Only this line (route_id).')), VehicleRef: Type.Optional(Ref('Only this vehicle (vehicle_id).')) }), response: XmlResponse },
    ),
  }, async (req, reply) => {
    const { group_id: g } = req.params;
    const out = await cache.output(g, { kind: 'siri-vm', staleSeconds: ctx.config.feeds.staleVehicleSeconds, lineRef: req.query.LineRef, vehicleRef: req.query.VehicleRef });
    return sendOutput(req, reply, out, maxAge());
  });

  app.get('/groups/:group_id/siri/stop-monitoring', {
    schema: op(
      base('siriStopMonitoring', 'SIRI StopMonitoring', 'The visits of a stop (MonitoringRef = stop_id) from now to now + PreviewInterval (default PT1H, at most PT24H), at most MaximumStopVisits (default 20, at most 200), by expected (else aimed) departure: the schedule with the cancellations, skipped stops (status cancelled), predicted expected times (the same as in EstimatedTimetable), delays and added stops of the snapshot. Not cached (it depends on the stop); reads the snapshot.'),
      {
        params: GroupParams,
        querystring: Type.Object({
          MonitoringRef: Ref('The stop (stop_id).'),
          LineRef: Type.Optional(Ref('Only this line (route_id).')),
          PreviewInterval: Type.String({ default: 'PT1H', pattern: '^P', description: 'ISO 8601 duration, e.g. PT30M.' }),
          MaximumStopVisits: Type.Integer({ default: 20, minimum: 1, maximum: 200 }),
        }),
        response: { 200: XmlResponse[200] },
      },
    ),
  }, async (req, reply) => {
    const { group_id: g } = req.params;
    const preview = Duration.fromISO(req.query.PreviewInterval);
    if (!preview.isValid || preview.as('seconds') <= 0 || preview.as('hours') > 24) throw invalid(['query', 'PreviewInterval'], 'An ISO 8601 duration from PT1S to PT24H', 'value_error', req.query.PreviewInterval);
    const { net, document } = await cache.stopMonitoring(g, { stopId: req.query.MonitoringRef, lineRef: req.query.LineRef, previewSeconds: preview.as('seconds'), max: req.query.MaximumStopVisits });
    return reply.type(XML).header('cache-control', `public, max-age=${maxAge()}`).header('age', snapshotAge(req, net)).send(document);
  });

  app.get('/groups/:group_id/siri/situation-exchange', {
    schema: op(
      base('siriSituationExchange', 'SIRI SituationExchange', 'A PtSituationElement per trip update in force with a message, and per detour (the GTFS-Realtime alerts): validity from its first service day to the end of its last, severity from the message (info slight, warning normal, severe severe), the journey or the line affected.'),
      { params: GroupParams, response: XmlResponse },
    ),
  }, async (req, reply) => {
    const { group_id: g } = req.params;
    const out = await cache.output(g, { kind: 'siri-sx' });
    return sendOutput(req, reply, out, maxAge());
  });

  app.get('/groups/:group_id/siri/check-status', {
    schema: op(
      base('siriCheckStatus', 'SIRI CheckStatus', 'Status true when the database answers; ServiceStartedTime is when this API instance started.'),
      { params: GroupParams, response: { 200: XmlResponse[200] } },
    ),
  }, async (req, reply) => {
    const tz = (await getGroup(ctx.db, req.params.group_id))!.timezone;
    return reply.type(XML).send(checkStatus(ctx.clock.now(), tz, true, startedAt));
  });

  // Discovery reads the GTFS published now; memoised per published version.
  const memo = new Map<string, Promise<Awaited<ReturnType<typeof discovery>>>>();
  const discover = async (g: string) => {
    const net = await cache.snapshot(g);
    const key = `${g}\n${(await publishedGtfsId(ctx.db, g)) ?? ''}`;
    if (!memo.has(key)) memo.set(key, discovery(ctx.db, g).catch((e: unknown) => { memo.delete(key); throw e; }));
    return { net, found: await memo.get(key)! };
  };

  app.get('/groups/:group_id/siri/lines-discovery', {
    schema: op(base('siriLinesDiscovery', 'SIRI LinesDiscovery', 'The lines (routes) of the GTFS published now.'), { params: GroupParams, response: { 200: XmlResponse[200] } }),
  }, async (req, reply) => {
    const { net, found } = await discover(req.params.group_id);
    return reply.type(XML).send(linesDiscovery(net.now, net.timezone, found.routes));
  });

  app.get('/groups/:group_id/siri/stop-points-discovery', {
    schema: op(base('siriStopPointsDiscovery', 'SIRI StopPointsDiscovery', 'The stop points (location_type 0) of the GTFS published now, with the lines calling there and their location.'), { params: GroupParams, response: { 200: XmlResponse[200] } }),
  }, async (req, reply) => {
    const { net, found } = await discover(req.params.group_id);
    return reply.type(XML).send(stopPointsDiscovery(net.now, net.timezone, found.stops));
  });
}
