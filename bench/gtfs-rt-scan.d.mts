/** The types of gtfs-rt-scan.mjs (plain JavaScript: the consumers' worker thread has no TypeScript loader). */
export function scanFeed(kind: 'vehicle-positions', body: Uint8Array): { header: number; vehicles: [string, number][] };
export function scanFeed(kind: 'trip-updates', body: Uint8Array): { header: number; trips: string[] };
