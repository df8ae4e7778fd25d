/** Validates XML against the official SIRI 2.1 schemas vendored in vendor/siri/xsd (xmllint-wasm, no system binary). */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { validateXML } from 'xmllint-wasm';

const XSD_DIR = fileURLToPath(new URL('../../vendor/siri/xsd', import.meta.url));
export const SIRI_EXAMPLES = fileURLToPath(new URL('../../vendor/siri/examples', import.meta.url));

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? files(join(dir, e.name)) : [join(dir, e.name)]));
}

const schemas = files(XSD_DIR).map((p) => ({ fileName: relative(XSD_DIR, p), contents: readFileSync(p, 'utf8') }));

/**
 * The validation errors of documents (empty when all are valid), validated in one run: the
 * schemas compile once. Schema-import warnings are not errors.
 */
export async function siriErrors(...documents: string[]): Promise<string[]> {
  const r = await validateXML({
    xml: documents.map((contents, i) => ({ fileName: `document-${i + 1}.xml`, contents })),
    schema: schemas.find((s) => s.fileName === 'siri.xsd')!,
    preload: schemas.filter((s) => s.fileName !== 'siri.xsd'),
    maxMemoryPages: 16384,
  });
  return r.valid ? [] : r.errors.map((e) => e.rawMessage).filter((m) => !m.includes('parser warning'));
}
