/**
 * Named records of the OpenAPI documents (`components.schemas`, issue #18 §1). A record is declared
 * once with `component(name, schema)` in its domain's schemas file; routes and other records use it
 * through `ref(record)`, a `$ref` that Fastify resolves for validation and serialization (buildApp
 * adds every component with app.addSchema) and @fastify/swagger turns into
 * `#/components/schemas/<name>`. The TypeScript type of `ref(record)` is the record's own, so the
 * TypeBox type provider still checks what handlers return.
 *
 * Conventions (docs/api-conventions.md): names are PascalCase nouns of the operator's words
 * (`Trip`, `TripOfDay`, `SignOnItem`); a response record is closed (`additionalProperties: false`)
 * unless the spec says it takes more, and then its known fields are still listed.
 */
import type { TSchema } from 'typebox';

const registry = new Map<string, TSchema>();

/** A schema under a component name; registered once (a second record of that name is a mistake). */
export function component<T extends TSchema>(name: string, schema: T): T & { $id: string } {
  if (!/^[A-Z][A-Za-z0-9]*$/.test(name)) throw new Error(`component name ${name}: PascalCase letters and digits`);
  if (registry.has(name)) throw new Error(`component ${name} declared twice`);
  // A copy that keeps TypeBox's non-enumerable markers, with the id the references point to.
  const named = Object.defineProperties({}, Object.getOwnPropertyDescriptors(schema)) as T & { $id: string };
  named.$id = name;
  registry.set(name, named);
  return named;
}

/** A reference to a component, typed as the component itself. */
export function ref<T extends TSchema>(schema: T): T {
  const id = (schema as { $id?: unknown }).$id;
  if (typeof id !== 'string' || registry.get(id) !== schema) throw new Error('ref() takes a schema made by component()');
  return { $ref: `${id}#` } as unknown as T;
}

/** Every component, for app.addSchema (buildApp) and the document tests. */
export function components(): TSchema[] {
  return [...registry.values()];
}
