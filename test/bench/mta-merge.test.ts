import { describe, expect, it } from 'vitest';
import { mergeFeeds, renameStopTime, type SourceFeed } from '../../bench/mta-feeds.js';

/** Two hand-made feeds whose collisions are known: what is shared and what is renamed is the truth. */
function feeds(): SourceFeed[] {
  const a: SourceFeed = {
    key: 'bx',
    agency: [{ agency_id: 'NYCT', agency_name: 'NYC Transit', agency_timezone: 'America/New_York' }],
    routes: [{ route_id: 'R1', agency_id: 'NYCT', route_short_name: '1' }],
    stops: [{ stop_id: 'S1', stop_name: 'Main St', stop_lat: '40.1', stop_lon: '-73.1' }, { stop_id: 'S2', stop_name: 'Elm St', stop_lat: '40.2', stop_lon: '-73.2' }],
    calendar: [{ service_id: 'WK', monday: '1', start_date: '20260901', end_date: '20261231' }],
    calendar_dates: [{ service_id: 'WK', date: '20261126', exception_type: '2' }],
    shapes: [{ shape_id: 'SH', shape_pt_sequence: '1', shape_pt_lat: '40.1', shape_pt_lon: '-73.1' }],
    trips: [{ trip_id: 'T1', route_id: 'R1', service_id: 'WK', block_id: 'B1', shape_id: 'SH' }],
  };
  const b: SourceFeed = {
    key: 'busco',
    // Same agency and route as the first feed (shared); S1 identical (shared), S2 elsewhere (renamed).
    agency: [{ agency_id: 'NYCT', agency_name: 'NYC Transit', agency_timezone: 'America/New_York' }],
    routes: [{ route_id: 'R1', agency_id: 'NYCT', route_short_name: '1' }],
    stops: [{ stop_id: 'S1', stop_name: 'Main St', stop_lat: '40.1', stop_lon: '-73.1' }, { stop_id: 'S2', stop_name: 'Elm St', stop_lat: '40.25', stop_lon: '-73.2' }],
    // WK: same days, another exception date (renamed); SA only in calendar_dates (new).
    calendar: [{ service_id: 'WK', monday: '1', start_date: '20260901', end_date: '20261231' }],
    calendar_dates: [{ service_id: 'WK', date: '20261225', exception_type: '2' }, { service_id: 'SA', date: '20261128', exception_type: '1' }],
    // Same shape id, another point (renamed).
    shapes: [{ shape_id: 'SH', shape_pt_sequence: '1', shape_pt_lat: '40.3', shape_pt_lon: '-73.1' }],
    // Trip T1 and block B1 again: another feed's trip and block (renamed); T2 on the shared route.
    trips: [{ trip_id: 'T1', route_id: 'R1', service_id: 'WK', block_id: 'B1', shape_id: 'SH' }, { trip_id: 'T2', route_id: 'R1', service_id: 'SA', block_id: 'B1', shape_id: 'SH' }],
  };
  return [a, b];
}

describe('bench/mta-feeds mergeFeeds', () => {
  it('shares ids defined with the same content, renames the later copy of the others and every reference to it', () => {
    const m = mergeFeeds(feeds());
    expect(m.tables.agency.map((r) => r['agency_id'])).toEqual(['NYCT']);
    expect(m.tables.routes.map((r) => r['route_id'])).toEqual(['R1']);
    expect(m.tables.stops.map((r) => r['stop_id'])).toEqual(['S1', 'S2', 'busco:S2']);
    expect(m.tables.stops.find((r) => r['stop_id'] === 'busco:S2')!['stop_lat']).toBe('40.25');
    expect(m.tables.calendar.map((r) => r['service_id'])).toEqual(['WK', 'busco:WK']);
    expect(m.tables.calendar_dates.map((r) => `${r['service_id']} ${r['date']}`)).toEqual(['WK 20261126', 'busco:WK 20261225', 'SA 20261128']);
    expect(m.tables.shapes.map((r) => `${r['shape_id']} ${r['shape_pt_lat']}`)).toEqual(['SH 40.1', 'busco:SH 40.3']);
    expect(m.tables.trips).toEqual([
      { trip_id: 'T1', route_id: 'R1', service_id: 'WK', block_id: 'B1', shape_id: 'SH' },
      { trip_id: 'busco:T1', route_id: 'R1', service_id: 'busco:WK', block_id: 'busco:B1', shape_id: 'busco:SH' },
      { trip_id: 'T2', route_id: 'R1', service_id: 'SA', block_id: 'busco:B1', shape_id: 'busco:SH' },
    ]);
    expect(m.collisions).toMatchObject({ agency: { shared: 1, renamed: 0 }, route: { shared: 1, renamed: 0 }, stop: { shared: 1, renamed: 1 }, service: { shared: 0, renamed: 1 }, shape: { shared: 0, renamed: 1 }, trip: { renamed: 1 }, block: { renamed: 1 } });
  });

  it('renames the stop times of a later feed as its trips and stops were renamed, and leaves the first feed\'s alone', () => {
    const m = mergeFeeds(feeds());
    const row = { trip_id: 'T1', stop_id: 'S2', stop_sequence: '2', arrival_time: '08:00:00' };
    expect(renameStopTime(row, m.renames.get('bx')!)).toEqual(row);
    expect(renameStopTime(row, m.renames.get('busco')!)).toEqual({ trip_id: 'busco:T1', stop_id: 'busco:S2', stop_sequence: '2', arrival_time: '08:00:00' });
    expect(renameStopTime({ ...row, stop_id: 'S1' }, m.renames.get('busco')!)['stop_id']).toBe('S1');
  });
});
