/**
 * Receiving a GTFS upload: the body (a raw zip, or a multipart form with one file) is spooled
 * to a private temporary file as it arrives, counting bytes, so neither memory nor disk takes
 * more than GTFS_MAX_UPLOAD_BYTES; the zip is then read from disk (yauzl needs random access).
 */
import { randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import type { FastifyRequest } from 'fastify';
import type { Multipart } from '@fastify/multipart';
import { fail, HttpError, invalid, ValidationError } from '../../platform/http/errors.js';

/** Content types taken as a raw zip body. */
export const ZIP_TYPES = ['application/zip', 'application/x-zip-compressed', 'application/octet-stream'];

export interface Upload {
  path: string;
  /** The multipart `name` field, or the uploaded file's name. */
  name: string | undefined;
  discard(): Promise<void>;
}

const tooLarge = (limit: number) => fail('PayloadTooLarge', `The GTFS upload is larger than the limit of ${limit} bytes (GTFS_MAX_UPLOAD_BYTES)`);

export async function receiveUpload(req: FastifyRequest, limit: number): Promise<Upload> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) throw tooLarge(limit);
  if (!req.isMultipart()) {
    if (!(req.body instanceof Readable)) throw fail('UnsupportedMediaType', `Send the GTFS zip as ${ZIP_TYPES.join(', ')}, or as the one file of a multipart/form-data form`);
    const path = await spool(req.body, limit);
    return { path, name: undefined, discard: () => rm(path, { force: true }) };
  }
  let path: string | undefined;
  let fileName: string | undefined;
  let name: string | undefined;
  try {
    for await (const part of req.parts() as AsyncIterable<Multipart>) {
      if (part.type === 'field') {
        if (part.fieldname === 'name' && typeof part.value === 'string') name = part.value;
        continue;
      }
      if (path !== undefined) {
        part.file.resume();
        throw invalid(['body', part.fieldname], 'Send one file only: the GTFS zip', 'value_error');
      }
      path = await spool(part.file, limit);
      fileName = part.filename;
    }
  } catch (err) {
    if (path) await rm(path, { force: true });
    const code = (err as { code?: string }).code;
    if (code === 'FST_REQ_FILE_TOO_LARGE') throw tooLarge(limit);
    if (code === 'FST_FILES_LIMIT') throw invalid(['body'], 'Send one file only: the GTFS zip', 'value_error');
    if (code === 'FST_PARTS_LIMIT' || code === 'FST_FIELDS_LIMIT') throw invalid(['body'], 'The form has too many parts: send the GTFS zip and, optionally, a name field', 'value_error');
    if (err instanceof HttpError || err instanceof ValidationError || (err as NodeJS.ErrnoException).syscall) throw err;
    // The form parser's own complaints (no boundary, truncated form, malformed part header).
    throw invalid(['body'], `The body is not a valid multipart/form-data form: ${(err as Error).message}`, 'value_error');
  }
  if (path === undefined) throw invalid(['body', 'file'], 'The form holds no file: send the GTFS zip as its one file', 'missing');
  const file = path;
  return { path: file, name: name?.trim() || fileName?.replace(/\.zip$/i, '') || undefined, discard: () => rm(file, { force: true }) };
}

/**
 * Writes the stream to a new private file. Past the limit it stops listening without destroying
 * the request (as Fastify does with its own body limit): the client gets a clear 413, and Node
 * discards the rest of the body.
 */
async function spool(source: Readable, limit: number): Promise<string> {
  const path = join(tmpdir(), `transit-ops-gtfs-${randomBytes(8).toString('hex')}.zip`);
  const out = createWriteStream(path, { flags: 'wx', mode: 0o600 });
  try {
    await new Promise<void>((resolve, reject) => {
      let size = 0;
      const stop = () => {
        source.off('data', onData);
        source.off('end', onEnd);
        source.off('error', onError);
      };
      const onData = (chunk: Buffer) => {
        size += chunk.length;
        if (size > limit) {
          stop();
          reject(tooLarge(limit));
        } else if (!out.write(chunk)) {
          source.pause();
          out.once('drain', () => source.resume());
        }
      };
      const onEnd = () => {
        stop();
        out.end(() => resolve());
      };
      const onError = (err: Error) => {
        stop();
        reject(err);
      };
      out.once('error', onError);
      source.on('data', onData);
      source.once('end', onEnd);
      source.once('error', onError);
    });
  } catch (err) {
    out.destroy();
    await rm(path, { force: true });
    throw err;
  }
  return path;
}
