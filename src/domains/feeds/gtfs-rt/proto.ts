/**
 * The official GTFS-Realtime definition (vendor/gtfs-realtime/gtfs-realtime.proto), loaded with
 * protobufjs for the experimental messages of the trip-modifications feed (TripModifications,
 * Shape, Stop). The path is the same from src/ and from the built dist/ (both four levels deep).
 */
import { fileURLToPath } from 'node:url';
import protobuf from 'protobufjs';

export const PROTO_PATH = fileURLToPath(new URL('../../../../vendor/gtfs-realtime/gtfs-realtime.proto', import.meta.url));

const root = protobuf.loadSync(PROTO_PATH);
export const FeedMessageWithModifications = root.lookupType('transit_realtime.FeedMessage');
