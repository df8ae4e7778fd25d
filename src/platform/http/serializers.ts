/**
 * When the response serializers are built. Fastify builds one fast-json-stringify function per
 * response schema of every route while the app gets ready: with the named components (hundreds,
 * each handed to every build), that is most of the 4 s an app takes to be ready. A serializer can
 * instead be built on the first answer of its route ('lazy'): the test suite builds an app per test
 * file and calls few of its routes, so it pays only for those. The service builds them all at
 * start ('eager'), so a schema that fast-json-stringify refuses stops the start, not a request;
 * test/platform/contract.test.ts builds an eager app to prove every schema builds.
 */
import { SerializerSelector, type SerializerFactory, type Serializer } from '@fastify/fast-json-stringify-compiler';

export type SerializerBuild = 'eager' | 'lazy';

/** Fastify's serializer factory (schemaController.compilersFactory.buildSerializer) for the given build. */
export function serializerFactory(build: SerializerBuild): SerializerFactory {
  const factory = SerializerSelector();
  if (build === 'eager') return factory;
  return (externalSchemas, options) => {
    const compile = factory(externalSchemas, options);
    return (route) => {
      let serialize: Serializer | undefined;
      return (data) => (serialize ??= compile(route))(data);
    };
  };
}
