/**
 * A GTFS zip archive opened safely from a file on disk. Everything is checked from the central
 * directory before a byte is inflated: entry count, unsafe names (yauzl refuses absolute paths
 * and `..`), encryption, the total uncompressed size of the files we will read, and the
 * compression ratio of each large entry (a zip bomb expands thousands of times; text, 5 to 20).
 * yauzl then checks while inflating that no entry yields more bytes than its header declares,
 * so the declared sizes the checks rely on cannot lie.
 */
import { Readable } from 'node:stream';
import yauzl, { type Entry, type ZipFile } from 'yauzl';
import type { GtfsLimits } from '../../../config.js';
import { fail } from '../../../platform/http/errors.js';

/** Entries below this size are not held to the ratio limit: they cannot expand to much. */
const RATIO_CHECKED_FROM_BYTES = 1024 * 1024;

export const invalidArchive = (why: string) => fail('InvalidGtfsArchive', `The GTFS archive is refused: ${why}`);
export const archiveTooLarge = (why: string) => fail('GtfsArchiveTooLarge', `The GTFS archive is refused: ${why}`);

export interface GtfsArchive {
  /** The GTFS files found (by file name, e.g. stops.txt), whether at the root or in one folder. */
  files: ReadonlyMap<string, Entry>;
  /** Entries that are not GTFS files we read (kept out of the import, reported as warnings). */
  ignored: readonly string[];
  /** The folder holding the files when they are not at the root of the archive. */
  folder: string | null;
  /** Sum of the uncompressed sizes of `files`. */
  totalBytes: number;
  /** The inflated bytes of one file; errors (corrupt data, size mismatch) are InvalidGtfsArchive. */
  read(name: string): AsyncIterable<Buffer>;
  close(): void;
}

export async function openGtfsArchive(path: string, known: ReadonlySet<string>, limits: GtfsLimits): Promise<GtfsArchive> {
  const zip = await new Promise<ZipFile>((resolve, reject) =>
    yauzl.open(path, { lazyEntries: true, autoClose: false, validateEntrySizes: true, strictFileNames: false }, (err, z) =>
      err || !z ? reject(invalidArchive(`it is not a readable zip archive (${err?.message ?? 'unknown error'})`)) : resolve(z),
    ),
  );
  try {
    if (zip.entryCount > limits.maxEntries) throw archiveTooLarge(`it holds ${zip.entryCount} entries, more than the limit of ${limits.maxEntries} (GTFS_MAX_ENTRIES)`);
    const entries = await readEntries(zip);
    const { files, ignored, folder } = pickGtfsFiles(entries, known);
    let totalBytes = 0;
    for (const [name, e] of files) {
      if (e.isEncrypted()) throw invalidArchive(`${e.fileName} is encrypted`);
      if (e.compressionMethod !== 0 && e.compressionMethod !== 8) throw invalidArchive(`${e.fileName} uses compression method ${e.compressionMethod} (only stored and deflate are read)`);
      if (e.uncompressedSize >= RATIO_CHECKED_FROM_BYTES && e.uncompressedSize > e.compressedSize * limits.maxCompressionRatio) {
        throw archiveTooLarge(`${name} expands ${Math.round(e.uncompressedSize / Math.max(1, e.compressedSize))} times (${e.uncompressedSize} bytes), more than the limit of ${limits.maxCompressionRatio} (GTFS_MAX_COMPRESSION_RATIO): a zip bomb`);
      }
      totalBytes += e.uncompressedSize;
    }
    if (totalBytes > limits.maxUncompressedBytes) {
      throw archiveTooLarge(`its files expand to ${totalBytes} bytes, more than the limit of ${limits.maxUncompressedBytes} (GTFS_MAX_UNCOMPRESSED_BYTES)`);
    }
    return { files, ignored, folder, totalBytes, read: (name) => inflate(zip, files.get(name)!), close: () => zip.close() };
  } catch (err) {
    zip.close();
    throw err;
  }
}

function readEntries(zip: ZipFile): Promise<Entry[]> {
  return new Promise((resolve, reject) => {
    const entries: Entry[] = [];
    zip.on('entry', (e: Entry) => {
      entries.push(e);
      zip.readEntry();
    });
    zip.on('end', () => resolve(entries));
    // yauzl names the problem: "invalid relative path: ../x", "absolute path: /etc/x", a truncated directory…
    zip.on('error', (err: Error) => reject(invalidArchive(err.message)));
    zip.readEntry();
  });
}

/**
 * GTFS files sit at the root of the archive; many producers put them in one folder instead,
 * which is accepted (and said in a warning). Anything else is ignored.
 */
function pickGtfsFiles(entries: readonly Entry[], known: ReadonlySet<string>) {
  const isFile = (e: Entry) => !e.fileName.endsWith('/');
  const baseName = (n: string) => n.slice(n.lastIndexOf('/') + 1);
  const dirName = (n: string) => n.slice(0, n.lastIndexOf('/') + 1);
  const gtfsLike = entries.filter((e) => isFile(e) && known.has(baseName(e.fileName)));
  const atRoot = gtfsLike.filter((e) => dirName(e.fileName) === '');
  const folders = new Set(gtfsLike.map((e) => dirName(e.fileName)));
  const folder = atRoot.length === 0 && folders.size === 1 ? [...folders][0]! : '';
  const files = new Map<string, Entry>();
  const ignored: string[] = [];
  for (const e of entries) {
    if (!isFile(e)) continue;
    const base = baseName(e.fileName);
    if (dirName(e.fileName) === folder && known.has(base)) files.set(base, e);
    else ignored.push(e.fileName);
  }
  return { files, ignored, folder: folder === '' ? null : folder };
}

async function* inflate(zip: ZipFile, entry: Entry): AsyncGenerator<Buffer> {
  const stream = await new Promise<Readable>((resolve, reject) =>
    zip.openReadStream(entry, (err, s) => (err || !s ? reject(invalidArchive(`${entry.fileName}: ${err?.message ?? 'cannot be read'}`)) : resolve(s))),
  );
  try {
    for await (const chunk of stream) yield chunk as Buffer;
  } catch (err) {
    throw invalidArchive(`${entry.fileName}: ${(err as Error).message}`);
  } finally {
    stream.destroy();
  }
}
