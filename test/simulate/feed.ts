/**
 * A small network for the simulator and schedule tests: two routes on a straight street of four
 * stops (about 1.1 km apart), block B1 chaining T1 (out, 08:00–08:20) and T2 (back, 08:30–08:50),
 * T3 on route R2 without a block (08:05–08:25), shapes for both directions, a weekday calendar.
 */
import { feedZip } from '../helpers/gtfs.js';

const STOPS = [['S1', 48.85, 2.3], ['S2', 48.85, 2.315], ['S3', 48.85, 2.33], ['S4', 48.85, 2.345]] as const;

export function smallNetworkZip(): Buffer {
  const shape = (id: string, order: readonly (typeof STOPS)[number][]) => {
    const pts: string[] = [];
    let k = 0;
    for (let i = 0; i < order.length - 1; i++) {
      for (let j = 0; j < 5; j++) {
        const f = j / 5;
        pts.push(`${id},${(order[i]![1] + (order[i + 1]![1] - order[i]![1]) * f).toFixed(6)},${(order[i]![2] + (order[i + 1]![2] - order[i]![2]) * f).toFixed(6)},${++k}`);
      }
    }
    const end = order[order.length - 1]!;
    pts.push(`${id},${end[1]},${end[2]},${++k}`);
    return pts;
  };
  const times = (trip: string, order: readonly string[], start: string) => {
    const [h, m] = start.split(':').map(Number) as [number, number];
    return order.map((s, i) => {
      const t = h * 60 + m + i * 7;
      const hh = String(Math.floor(t / 60)).padStart(2, '0');
      const mm = String(t % 60).padStart(2, '0');
      const dep = i === 0 || i === order.length - 1 ? `${hh}:${mm}:00` : `${hh}:${mm}:30`;
      return `${trip},${hh}:${mm}:00,${dep},${s},${i + 1}`;
    });
  };
  const out = ['S1', 'S2', 'S3', 'S4'];
  const back = ['S4', 'S3', 'S2', 'S1'];
  return feedZip({
    'agency.txt': 'agency_id,agency_name,agency_url,agency_timezone\nA,Agency,https://a.example,Europe/Paris\n',
    'stops.txt': `stop_id,stop_name,stop_lat,stop_lon\n${STOPS.map(([id, lat, lon]) => `${id},Stop ${id},${lat},${lon}`).join('\n')}\n`,
    'routes.txt': 'route_id,agency_id,route_short_name,route_long_name,route_type\nR1,A,1,Line one,3\nR2,A,2,Line two,3\n',
    'calendar.txt': 'service_id,monday,tuesday,wednesday,thursday,friday,saturday,sunday,start_date,end_date\nWK,1,1,1,1,1,0,0,20260101,20271231\n',
    'shapes.txt': `shape_id,shape_pt_lat,shape_pt_lon,shape_pt_sequence\n${[...shape('OUT', STOPS), ...shape('BACK', [...STOPS].reverse())].join('\n')}\n`,
    'trips.txt': 'route_id,service_id,trip_id,trip_headsign,direction_id,block_id,shape_id\nR1,WK,T1,East,0,B1,OUT\nR1,WK,T2,West,1,B1,BACK\nR2,WK,T3,East,0,,OUT\n',
    'stop_times.txt': `trip_id,arrival_time,departure_time,stop_id,stop_sequence\n${[...times('T1', out, '08:00'), ...times('T2', back, '08:30'), ...times('T3', out, '08:05')].join('\n')}\n`,
  });
}
