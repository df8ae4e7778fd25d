/**
 * A minimal zip writer: the demo network's GTFS feed, test feeds and benchmark feeds. Stored or
 * deflated entries, streamed with data descriptors; tests also use it to build hostile archives
 * (a name with `..`, a central directory that lies about a size, an entry flagged encrypted).
 */
import { createWriteStream } from 'node:fs';
import { once } from 'node:events';
import type { Writable } from 'node:stream';
import { crc32, deflateRawSync, createDeflateRaw } from 'node:zlib';

export interface RawEntry {
  name: string;
  data: string | Buffer;
  store?: boolean;
  /** Write this uncompressed size in the headers instead of the real one (a lying archive). */
  declaredSize?: number;
  /** Flag the entry as encrypted (the data stays clear: readers must refuse it on the flag). */
  encrypted?: boolean;
}

const DOS_DATE = ((2024 - 1980) << 9) | (1 << 5) | 1;

function localHeader(name: Buffer, method: number, flags: number, crc: number, csize: number, usize: number): Buffer {
  const h = Buffer.alloc(30);
  h.writeUInt32LE(0x04034b50, 0);
  h.writeUInt16LE(20, 4);
  h.writeUInt16LE(flags, 6);
  h.writeUInt16LE(method, 8);
  h.writeUInt16LE(0, 10);
  h.writeUInt16LE(DOS_DATE, 12);
  h.writeUInt32LE(crc >>> 0, 14);
  h.writeUInt32LE(csize, 18);
  h.writeUInt32LE(usize, 22);
  h.writeUInt16LE(name.length, 26);
  h.writeUInt16LE(0, 28);
  return Buffer.concat([h, name]);
}

interface CentralRecord {
  name: Buffer;
  method: number;
  flags: number;
  crc: number;
  csize: number;
  usize: number;
  offset: number;
}

function centralDirectory(records: readonly CentralRecord[], offset: number): Buffer {
  const parts = records.map((r) => {
    const h = Buffer.alloc(46);
    h.writeUInt32LE(0x02014b50, 0);
    h.writeUInt16LE(20, 4);
    h.writeUInt16LE(20, 6);
    h.writeUInt16LE(r.flags, 8);
    h.writeUInt16LE(r.method, 10);
    h.writeUInt16LE(0, 12);
    h.writeUInt16LE(DOS_DATE, 14);
    h.writeUInt32LE(r.crc >>> 0, 16);
    h.writeUInt32LE(r.csize, 20);
    h.writeUInt32LE(r.usize, 24);
    h.writeUInt16LE(r.name.length, 28);
    h.writeUInt32LE(r.offset, 42);
    return Buffer.concat([h, r.name]);
  });
  const dir = Buffer.concat(parts);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(records.length, 8);
  end.writeUInt16LE(records.length, 10);
  end.writeUInt32LE(dir.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([dir, end]);
}

/** A whole archive in memory (small test feeds and hostile archives). */
export function zipBuffer(entries: readonly RawEntry[]): Buffer {
  const parts: Buffer[] = [];
  const records: CentralRecord[] = [];
  let offset = 0;
  for (const e of entries) {
    const data = Buffer.isBuffer(e.data) ? e.data : Buffer.from(e.data, 'utf8');
    const body = e.store ? data : deflateRawSync(data);
    const name = Buffer.from(e.name, 'utf8');
    const r: CentralRecord = { name, method: e.store ? 0 : 8, flags: 0x800 | (e.encrypted ? 1 : 0), crc: crc32(data), csize: body.length, usize: e.declaredSize ?? data.length, offset };
    const header = localHeader(name, r.method, r.flags, r.crc, r.csize, r.usize);
    parts.push(header, body);
    records.push(r);
    offset += header.length + body.length;
  }
  parts.push(centralDirectory(records, offset));
  return Buffer.concat(parts);
}

/** Streams an archive to a file: each entry's text is deflated as it is produced (large feeds). */
export class ZipFileWriter {
  private readonly out: Writable;
  private offset = 0;
  private readonly records: CentralRecord[] = [];

  constructor(path: string) {
    this.out = createWriteStream(path);
  }

  private async write(b: Buffer) {
    this.offset += b.length;
    if (!this.out.write(b)) await once(this.out, 'drain');
  }

  async add(fileName: string, content: Iterable<string> | AsyncIterable<string>, level = 1): Promise<void> {
    const name = Buffer.from(fileName, 'utf8');
    const offset = this.offset;
    await this.write(localHeader(name, 8, 0x808, 0, 0, 0));
    const deflate = createDeflateRaw({ level });
    let crc = 0;
    let usize = 0;
    let csize = 0;
    const compressed = (async () => {
      for await (const chunk of deflate) {
        csize += (chunk as Buffer).length;
        await this.write(chunk as Buffer);
      }
    })();
    for await (const text of content) {
      const b = Buffer.from(text, 'utf8');
      crc = crc32(b, crc);
      usize += b.length;
      if (!deflate.write(b)) await once(deflate, 'drain');
    }
    deflate.end();
    await compressed;
    const descriptor = Buffer.alloc(16);
    descriptor.writeUInt32LE(0x08074b50, 0);
    descriptor.writeUInt32LE(crc >>> 0, 4);
    descriptor.writeUInt32LE(csize, 8);
    descriptor.writeUInt32LE(usize, 12);
    await this.write(descriptor);
    this.records.push({ name, method: 8, flags: 0x808, crc, csize, usize, offset });
  }

  async close(): Promise<void> {
    await this.write(centralDirectory(this.records, this.offset));
    this.out.end();
    await once(this.out, 'finish');
  }
}
