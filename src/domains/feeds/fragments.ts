/**
 * The pieces of a network-wide output kept from one rebuild to the next (issue #16). A city's
 * SIRI EstimatedTimetable is 150 MB of XML and its trip-updates 10 MB of protobuf, rebuilt every
 * few seconds, while most trips are told as they were: a trip not reported on since the last
 * rebuild, or scheduled within the horizon with its vehicle not known, keeps its predictions.
 * Each trip's piece (the timetable's: its text, with the size, CRC and digest of its bytes;
 * trip-updates': its bytes) is kept under the trip's key with its signature (FeedTrip.signature),
 * and made again only when the signature changed.
 *
 * The timetable is kept in its gzip form only (assemble; trip-updates' kilobyte pieces are gzipped
 * whole, which costs less), made from the pieces' deflated forms, as pigz does:
 * each piece is a raw deflate stream ended by a sync flush, so they follow one another as one
 * stream (RFC 1951), and each is compressed with the bytes before it (the previous piece of its
 * run) as its dictionary, which the decoder holds in its window at that point: the result
 * compresses nearly as the whole document does. A piece's deflated form is reused while the piece
 * and the one before it are the same, so what changed (and what follows it) is compressed, not the
 * whole. The first piece of a run is compressed without a dictionary: the runs are the pieces that
 * change together (a timetable's: the journeys predicted from one vehicle's trip, which its every
 * report moves), so a run changed does not make the run after it compressed again.
 *
 * A piece keeps its text, not its bytes: the bytes are written into a scratch buffer of the thread
 * when they are needed (its digest and CRC when it is made, its deflate with the piece before it).
 * A city rebuild makes 3,000 to 5,000 journeys of 12 KB; as Buffers (memory outside the
 * JavaScript heap) their 40–60 MB started a full collection of the feeds' 1.1 GB heap at nearly
 * every rebuild (V8 collects when memory outside its heap grew by 64 MB): the garbage collector
 * took 23–35 % of the feed thread's time (bench/RESULTS.md, 2026-11-29).
 */
import { createHash } from 'node:crypto';
import { constants, crc32, deflateRawSync } from 'node:zlib';
import { slices } from '../../platform/slices.js';
import type { FeedTrip } from './network.js';

export interface Piece {
  /** The piece's text. */
  text: string;
  /** Its size in bytes (UTF-8). */
  size: number;
  /** CRC-32 of its bytes: the gzip trailer's is combined from the pieces' (crc32Combine). */
  crc: number;
  /** SHA-256 of its bytes: an output's fingerprint can be made of its pieces' digests. */
  digest: Buffer;
}

/**
 * A buffer the bytes of a text are written into, reused from one text to the next (grown when one
 * needs more): what it returns is valid until its next write. Synchronous use only (no await
 * between a write and the use of its bytes), so one per thread serves every caller.
 */
class Scratch {
  private buf = Buffer.allocUnsafeSlow(64 * 1024);

  bytesOf(text: string): Buffer {
    // UTF-8 takes at most 3 bytes per UTF-16 unit.
    if (this.buf.length < text.length * 3) this.buf = Buffer.allocUnsafeSlow(text.length * 3);
    return this.buf.subarray(0, this.buf.write(text, 0, 'utf8'));
  }
}

/** The bytes of the piece being made or deflated, and of the piece before it (its dictionary). */
const pieceBytes = new Scratch();
const dictionaryBytes = new Scratch();

/** A piece of an output: its text with the size, CRC and digest of its bytes. */
export function piece(text: string): Piece {
  const bytes = pieceBytes.bytesOf(text);
  return { text, size: bytes.length, crc: crc32(bytes), digest: createHash('sha256').update(bytes).digest() };
}

/** The CRC-32 polynomial, reflected (zlib's). */
const POLY = 0xedb88320;

/** a(x) b(x) modulo p(x), the CRC-32 polynomial (zlib's multmodp). */
function multmodp(a: number, b: number): number {
  let m = 0x80000000;
  let p = 0;
  for (;;) {
    if ((a & m) !== 0) {
      p ^= b;
      if ((a & (m - 1)) === 0) break;
    }
    m >>>= 1;
    b = b & 1 ? (b >>> 1) ^ POLY : b >>> 1;
  }
  return p >>> 0;
}

/** x^(2^n) modulo p(x), n = 0..31 (zlib's x2n_table). */
const X2N: readonly number[] = (() => {
  const t = [0x40000000];
  for (let n = 1; n < 32; n++) t.push(multmodp(t[n - 1]!, t[n - 1]!));
  return t;
})();

/**
 * The CRC-32 of two byte sequences one after the other, from the CRC of each and the length of the
 * second (zlib's crc32_combine): the gzip trailer of an output made of pieces without their bytes.
 */
export function crc32Combine(crc1: number, crc2: number, len2: number): number {
  // x^(8 len2) modulo p(x): the first CRC shifted past the second's bytes.
  let p = 0x80000000;
  let k = 3;
  for (let n = len2; n > 0; n = Math.floor(n / 2), k++) if (n % 2 === 1) p = multmodp(X2N[k & 31]!, p);
  return (multmodp(p, crc1) ^ crc2) >>> 0;
}

/** The gzip member header (RFC 1952): deflate, no name, no time, Unix, as zlib writes it. */
const GZIP_HEADER = Buffer.from([0x1f, 0x8b, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03]);
/** The final block that ends the deflate stream: an empty fixed-Huffman block with BFINAL set. */
const FINAL_BLOCK = Buffer.from([0x03, 0x00]);
/** The deflate window: how far back the decoder can refer, so the most of a dictionary used. */
const WINDOW = 32 * 1024;

/**
 * The pieces' compression level: 3, not zlib's default 6. On SIRI journeys
 * (bench/deflate-levels.ts: 2,000 synthetic ones, 32 MB, each primed with the one before, two
 * runs) level 3 took 121–127 ms of CPU against 444–683 ms, for 11 % more bytes (2.11 against
 * 1.90 MB); deflating was the largest part of a city's timetable rebuild (bench/RESULTS.md).
 */
const PIECE_LEVEL = 3;

/**
 * The output buffer zlib fills per call: 2 KiB, under Buffer's pool threshold (4 KiB), so a
 * piece's deflate (a kilobyte or two out) takes a slice of the shared pool, not an ArrayBuffer of
 * its own: zlib's default 16 KiB chunk made each of a city rebuild's 6,000 deflates allocate one,
 * and the timetable took 4.3–4.9 s of CPU against 2.8–3.2 s with this (bench/feeds-rebuild.ts,
 * 2026-11-29; the same bytes out).
 */
const PIECE_CHUNK = 2048;

/** A piece's deflated form, made with the piece before it (`after`) as its dictionary. */
const deflatedForms = new WeakMap<Piece, { after: Piece | undefined; deflated: Buffer }>();

/** A piece's deflated form, made with the piece before it (`after`) as its dictionary, and kept so. */
function deflateAfter(p: Piece, after: Piece | undefined): Buffer {
  const before = after && after.size > 0 ? dictionaryBytes.bytesOf(after.text) : undefined;
  const dictionary = before?.subarray(Math.max(0, before.length - WINDOW));
  const deflated = deflateRawSync(pieceBytes.bytesOf(p.text), { level: PIECE_LEVEL, finishFlush: constants.Z_SYNC_FLUSH, chunkSize: PIECE_CHUNK, ...(dictionary ? { dictionary } : {}) });
  deflatedForms.set(p, { after, deflated });
  return deflated;
}

/**
 * An output made of runs of pieces, in order: its gzip form, its size, and how many pieces were
 * deflated anew. Each piece is deflated with the piece before it in its run as its dictionary, the
 * first of a run without one (a run's pieces are those that change together). The pieces are
 * deflated in slices (the event loop is given back between two), those deflated after the same
 * piece at the previous build not again. The output's bytes are not joined: a city's timetable is
 * 150 MB of XML, its gzip form a tenth of that, and every client of such a feed takes gzip (one
 * that does not is sent the gzip form inflated as it goes: cache.ts sendOutput). The gzip
 * trailer's CRC is combined from the pieces' own, in order.
 */
export async function assemble(runs: readonly (readonly Piece[])[]): Promise<{ gzip: Buffer; size: number; deflated: number }> {
  const out: Buffer[] = [GZIP_HEADER];
  const turn = slices();
  let crc = 0;
  let size = 0;
  let deflated = 0;
  for (const run of runs) {
    for (let i = 0; i < run.length; i++) {
      const p = run[i]!;
      const known = deflatedForms.get(p);
      const after = run[i - 1];
      if (known && known.after === after) out.push(known.deflated);
      else {
        out.push(deflateAfter(p, after));
        deflated++;
      }
      crc = crc32Combine(crc, p.crc, p.size);
      size += p.size;
      const wait = turn();
      if (wait) await wait;
    }
  }
  const trailer = Buffer.alloc(8);
  trailer.writeUInt32LE(crc, 0);
  trailer.writeUInt32LE(size % 2 ** 32, 4);
  out.push(FINAL_BLOCK, trailer);
  return { gzip: Buffer.concat(out), size, deflated };
}

/**
 * The trips' pieces of one build of an output (a Piece, or the bytes alone where no digest is
 * needed), reusing those of the previous build whose trip has the same signature. The previous
 * build's pieces are only read, so two builds from the same previous one are independent; the
 * pieces of trips no longer in the output are not kept.
 */
export class TripPieces<P = Piece> {
  private readonly kept = new Map<string, { signature: string; piece: P | null }>();
  /** Trips whose piece was reused, made (the benchmark's and the tests' figures). */
  reused = 0;
  made = 0;
  /** Of an output assembled from them (the SIRI timetable): the pieces deflated anew, the others' deflated forms reused (assemble). */
  deflated: number | undefined;

  constructor(private previous: TripPieces<P> | undefined) {}

  /** The trip's piece (null: the trip has none in this output): the previous one if its signature is the same, else `make`'s. */
  of(ft: Pick<FeedTrip, 'key' | 'signature'>, make: () => P | null): P | null {
    const known = ft.signature === null ? undefined : this.previous?.kept.get(ft.key);
    if (known && known.signature === ft.signature) {
      this.reused++;
      this.kept.set(ft.key, known);
      return known.piece;
    }
    this.made++;
    const made = make();
    if (ft.signature !== null) this.kept.set(ft.key, { signature: ft.signature, piece: made });
    return made;
  }

  /**
   * Ends the build: the previous build is no longer referenced (its pieces not reused are freed).
   * `moved`: each piece kept as what it gives (the same content, stored elsewhere: trip-updates'
   * pieces moved into the buffer of the build's writer); the previous build's entries unchanged.
   */
  done(moved?: (piece: P) => P): this {
    this.previous = undefined;
    if (moved) for (const [key, e] of this.kept) if (e.piece !== null) this.kept.set(key, { signature: e.signature, piece: moved(e.piece) });
    return this;
  }
}
