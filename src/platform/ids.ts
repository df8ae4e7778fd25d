/** Identifiers: 24 lowercase hex characters, ordered by creation time (ObjectId layout). */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

const processRandom = randomBytes(5);
let counter = randomBytes(3).readUIntBE(0, 3);

/** 4 bytes of seconds, 5 random bytes per process, 3 bytes of counter: sortable like an ObjectId. */
export function objectId(atMs: number = Date.now()): string {
  const b = Buffer.alloc(12);
  b.writeUInt32BE(Math.floor(atMs / 1000) >>> 0, 0);
  processRandom.copy(b, 4);
  counter = (counter + 1) % 0x1000000;
  b.writeUIntBE(counter, 9, 3);
  return b.toString('hex');
}

export const OBJECT_ID_PATTERN = '^[0-9a-fA-F]{24}$';

/** A secret for a session or an API key: 32 random bytes, URL-safe. */
export function newSecret(prefix: string): string {
  return `${prefix}${randomBytes(32).toString('base64url')}`;
}

/** Secrets are stored only as this hash; they carry 256 bits, so a fast hash is enough. */
export function hashSecret(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}

export function safeEqual(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}
