/**
 * The JSON form of the GTFS-Realtime feeds (`?format=json`) as named components, made from the
 * official definition (vendor/gtfs-realtime/gtfs-realtime.proto) rather than written by hand: one
 * component per message (`GtfsRtFeedMessage`, `GtfsRtFeedEntity`, `GtfsRtTripUpdate`,
 * `GtfsRtVehiclePosition`, `GtfsRtAlert`, `GtfsRtTripModifications`…, nested messages named after
 * their parents: `GtfsRtTripUpdateStopTimeUpdate`), each field with its type, its allowed values
 * and the proto's own comment. The JSON is protobufjs's object form of the message (feeds.ts,
 * feedAsJson): field names in lowerCamelCase, enums by name, 64-bit integers as numbers, unset
 * fields and empty repeated fields left out; proto2 `required` fields are required.
 */
import { readFileSync } from 'node:fs';
import protobuf from 'protobufjs';
import { Type, type TSchema } from 'typebox';
import { component } from '../../../platform/http/components.js';
import { PROTO_PATH } from './proto.js';

const root = protobuf.parse(readFileSync(PROTO_PATH, 'utf8'), { alternateCommentMode: true }).root;
root.resolveAll();

const INTEGERS: Record<string, { minimum?: number }> = {
  int32: {}, sint32: {}, sfixed32: {}, int64: {}, sint64: {}, sfixed64: {},
  uint32: { minimum: 0 }, fixed32: { minimum: 0 }, uint64: { minimum: 0 }, fixed64: { minimum: 0 },
};

/** The first paragraph of a proto comment, on one line, shortened to about 600 characters. */
function describe(comment: string | null | undefined): string | undefined {
  if (!comment) return undefined;
  const first = comment.split(/\n\s*\n/)[0]!.replace(/\s+/g, ' ').trim();
  if (first === '') return undefined;
  return first.length > 600 ? `${first.slice(0, 597)}…` : first;
}

const nameOf = (t: protobuf.ReflectionObject) => `GtfsRt${t.fullName.replace(/^\.transit_realtime\./, '').split('.').join('')}`;

function fieldSchema(f: protobuf.Field): Record<string, unknown> {
  const description = describe(f.comment);
  const text = description ? { description } : {};
  let item: Record<string, unknown>;
  const resolved = f.resolvedType;
  if (resolved instanceof protobuf.Type) item = { $ref: `${nameOf(resolved)}#` };
  else if (resolved instanceof protobuf.Enum) item = { type: 'string', enum: Object.keys(resolved.values) };
  else if (f.type in INTEGERS) item = { type: 'integer', ...INTEGERS[f.type] };
  else if (f.type === 'double' || f.type === 'float') item = { type: 'number' };
  else if (f.type === 'bool') item = { type: 'boolean' };
  else if (f.type === 'string') item = { type: 'string' };
  else throw new Error(`gtfs-realtime.proto: no JSON schema for the type ${f.type} of ${f.fullName}`);
  if (f.repeated) return { type: 'array', items: item, ...text };
  // A reference takes no sibling keywords in OpenAPI 3.0: its description goes on a wrapper.
  return '$ref' in item ? (description ? { allOf: [item], ...text } : item) : { ...item, ...text };
}

const made = new Map<string, TSchema>();
function make(t: protobuf.Type): void {
  const name = nameOf(t);
  if (made.has(name)) return;
  const properties: Record<string, unknown> = {};
  const required: string[] = [];
  for (const f of t.fieldsArray) {
    properties[f.name] = fieldSchema(f);
    if (f.required) required.push(f.name);
  }
  const description = describe(t.comment);
  made.set(name, component(name, Type.Unsafe<Record<string, unknown>>({
    type: 'object',
    properties,
    ...(required.length ? { required } : {}),
    additionalProperties: false,
    description: `GTFS-Realtime ${t.fullName.replace(/^\./, '')} (JSON form)${description ? `: ${description}` : '.'}`,
  })));
  for (const f of t.fieldsArray) if (f.resolvedType instanceof protobuf.Type) make(f.resolvedType);
}

make(root.lookupType('transit_realtime.FeedMessage'));

/** The JSON form of a GTFS-Realtime feed (every feed: the entities carry what their feed gives). */
export const GtfsRtFeedMessage = made.get('GtfsRtFeedMessage')!;
