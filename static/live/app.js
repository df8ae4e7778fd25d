// The live network page: the network drawn in SVG from the GTFS in force, the vehicles on duty
// from a snapshot (GET live-map/vehicles), moved by the live stream (events/op/subscribe) and
// refreshed by a new snapshot every 10 s (delays, duties that began or ended). Without the
// stream, the page polls the snapshot every 5 s. No external resource: it works offline.
'use strict';

const SVG = 'http://www.w3.org/2000/svg';
const $ = (id) => document.getElementById(id);
const state = { token: null, group: 'demo', timezone: undefined, vehicles: new Map(), selected: null, project: null, ws: null, poll: null, refreshSoon: null };

function el(tag, attrs = {}, text) {
  const node = tag.startsWith('svg:') ? document.createElementNS(SVG, tag.slice(4)) : document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, String(v));
  if (text !== undefined) node.textContent = text;
  return node;
}

function setStatus(text) {
  $('status').textContent = text;
}

async function api(path) {
  const res = await fetch(`/api/v4/groups/${encodeURIComponent(state.group)}${path}`, { headers: { authorization: `Bearer ${state.token}` } });
  if (res.status === 401) {
    logout();
    throw new Error('session expired');
  }
  if (!res.ok) throw new Error(`${path}: ${res.status} ${(await res.json().catch(() => ({}))).detail ?? ''}`);
  return res.json();
}

// ---------------------------------------------------------------- login

function showLogin(message = '') {
  $('login').hidden = false;
  $('map-pane').hidden = true;
  $('logout').hidden = true;
  $('login-error').textContent = message;
}

async function login(event) {
  event.preventDefault();
  const form = new FormData(event.target);
  const res = await fetch('/api/v4/login', {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ email: form.get('email'), password: form.get('password') }).toString(),
  });
  if (!res.ok) {
    showLogin(res.status === 401 ? 'Wrong email or password.' : `Login failed (${res.status}).`);
    return;
  }
  state.token = (await res.json()).session_id;
  state.group = String(form.get('group') || 'demo');
  sessionStorage.setItem('transit-ops-live', JSON.stringify({ token: state.token, group: state.group }));
  open();
}

function logout() {
  sessionStorage.removeItem('transit-ops-live');
  state.token = null;
  if (state.ws) state.ws.close();
  clearInterval(state.poll);
  showLogin();
}

// ---------------------------------------------------------------- the map

function drawNetwork(network) {
  state.timezone = network.timezone;
  const svg = $('map');
  svg.replaceChildren();
  const points = network.routes.flatMap((r) => r.shapes.flat()).concat(network.stops.map((s) => [s.lon, s.lat]));
  if (points.length === 0) {
    svg.append(el('svg:text', { x: 20, y: 40 }, 'No GTFS published for today.'));
    return;
  }
  const lons = points.map((p) => p[0]);
  const lats = points.map((p) => p[1]);
  const [minLon, maxLon, minLat, maxLat] = [Math.min(...lons), Math.max(...lons), Math.min(...lats), Math.max(...lats)];
  const kx = Math.cos(((minLat + maxLat) / 2) * Math.PI / 180);
  const scale = 1000 / Math.max((maxLon - minLon) * kx, (maxLat - minLat), 1e-6);
  const pad = 30;
  state.project = (lon, lat) => [pad + (lon - minLon) * kx * scale, pad + (maxLat - lat) * scale];
  const width = (maxLon - minLon) * kx * scale + 2 * pad;
  const height = (maxLat - minLat) * scale + 2 * pad;
  svg.setAttribute('viewBox', `0 0 ${width.toFixed(0)} ${height.toFixed(0)}`);
  const shapes = el('svg:g', { id: 'shapes' });
  for (const route of network.routes) {
    for (const line of route.shapes) {
      const d = line.map((p, i) => `${i ? 'L' : 'M'}${state.project(p[0], p[1]).map((v) => v.toFixed(1)).join(' ')}`).join('');
      const path = el('svg:path', { d, class: 'shape', stroke: `#${route.color || '888888'}` });
      path.append(el('svg:title', {}, `${route.short_name ?? route.route_id} ${route.long_name ?? ''}`));
      shapes.append(path);
    }
  }
  const stops = el('svg:g', { id: 'stops' });
  for (const s of network.stops) {
    const [x, y] = state.project(s.lon, s.lat);
    const c = el('svg:circle', { cx: x.toFixed(1), cy: y.toFixed(1), r: 3.5, class: 'stop' });
    c.append(el('svg:title', {}, s.name ?? s.stop_id));
    stops.append(c);
  }
  svg.append(shapes, stops, el('svg:g', { id: 'vehicles' }));
}

function placeVehicle(v) {
  if (!v.position || !state.project) return;
  let node = document.querySelector(`[data-vehicle="${CSS.escape(v.vehicle_id)}"]`);
  if (!node) {
    node = el('svg:g', { class: 'vehicle', 'data-vehicle': v.vehicle_id, 'data-device': v.device_id, 'data-testid': 'vehicle' });
    node.append(el('svg:circle', { r: 11 }), el('svg:text', {}, v.fleet_number ?? v.vehicle_id), el('svg:title', {}));
    node.addEventListener('click', () => select(v.device_id));
    $('vehicles').append(node);
  }
  const [x, y] = state.project(v.position.lon, v.position.lat);
  node.setAttribute('transform', `translate(${x.toFixed(1)} ${y.toFixed(1)})`);
  node.querySelector('circle').setAttribute('fill', `#${v.trip?.route_color || '555555'}`);
  node.querySelector('title').textContent = `Bus ${v.fleet_number ?? v.vehicle_id} · ${v.driver_name ?? v.driver_id}${v.trip ? ` · line ${v.trip.route_short_name ?? ''} to ${v.trip.headsign ?? ''}` : ''}`;
  node.classList.toggle('selected', state.selected === v.device_id);
}

// ---------------------------------------------------------------- the vehicles

async function refresh() {
  const list = await api('/live-map/vehicles');
  const seen = new Set();
  for (const v of list) {
    seen.add(v.device_id);
    const known = state.vehicles.get(v.device_id);
    // A newer position from the stream wins over the snapshot's.
    if (known?.position?.at && v.position?.at && known.position.at > v.position.at) v.position = known.position;
    state.vehicles.set(v.device_id, v);
    placeVehicle(v);
  }
  for (const [device, v] of state.vehicles) {
    if (seen.has(device)) continue;
    state.vehicles.delete(device);
    document.querySelector(`[data-vehicle="${CSS.escape(v.vehicle_id)}"]`)?.remove();
  }
  renderTrips();
}

/** A time of day in the network's time zone. */
function clock(iso) {
  return new Date(iso).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit', hourCycle: 'h23', timeZone: state.timezone });
}

function delayText(seconds) {
  if (seconds === null || seconds === undefined) return ['—', 'on-time'];
  const minutes = Math.round(seconds / 60);
  if (minutes === 0) return ['on time', 'on-time'];
  return [`${minutes > 0 ? '+' : ''}${minutes} min`, minutes > 0 ? 'late' : 'early'];
}

function renderTrips() {
  const running = [...state.vehicles.values()].filter((v) => v.trip).sort((a, b) => (b.trip.delay_seconds ?? -1e9) - (a.trip.delay_seconds ?? -1e9));
  $('count').textContent = `(${running.length} of ${state.vehicles.size} vehicles on duty)`;
  $('trips').replaceChildren(...running.map((v) => {
    const li = el('li', { 'data-trip': v.trip.trip_id, 'data-device': v.device_id });
    const badge = el('span', { class: 'badge' }, v.trip.route_short_name ?? v.trip.route_id ?? '?');
    badge.style.background = `#${v.trip.route_color || '555555'}`;
    badge.style.color = '#fff';
    const [text, cls] = delayText(v.trip.delay_seconds);
    li.append(badge, el('span', {}, `${v.trip.headsign ?? v.trip.trip_id} · bus ${v.fleet_number ?? v.vehicle_id}`), el('span', { class: `delay ${cls}` }, text));
    if (state.selected === v.device_id) li.classList.add('selected');
    li.addEventListener('click', () => select(v.device_id));
    return li;
  }));
}

async function select(deviceId) {
  state.selected = deviceId;
  for (const v of state.vehicles.values()) placeVehicle(v);
  renderTrips();
  const v = state.vehicles.get(deviceId);
  const box = $('duty');
  if (!v) return;
  box.hidden = false;
  box.replaceChildren(el('h3', {}, `Bus ${v.fleet_number ?? v.vehicle_id}: duty of ${v.driver_name ?? v.driver_id}`), el('p', {}, 'Loading…'));
  const duty = await api(`/duties/${encodeURIComponent(v.duty_id)}`);
  const table = el('table');
  table.append(el('tr', {}, undefined));
  table.firstChild.append(el('th', {}, 'trip'), el('th', {}, 'started'), el('th', {}, 'ended'));
  for (const t of duty.trips) {
    const row = el('tr');
    const time = (iso) => (iso ? clock(iso) : '…');
    row.append(el('td', {}, t.trip_id + (t.start_time ? ` ${t.start_time}` : '')), el('td', {}, time(t.started_at)), el('td', {}, time(t.ended_at)));
    table.append(row);
  }
  box.replaceChildren(
    el('h3', {}, `Bus ${v.fleet_number ?? v.vehicle_id}: duty of ${v.driver_name ?? v.driver_id}`),
    el('p', {}, `Signed on at ${clock(duty.signed_on_at)} on device ${duty.device_id}; ${duty.trips.length} trips so far.`),
    table,
  );
}

// ---------------------------------------------------------------- the live stream

function connectStream() {
  const url = `${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/api/v4/groups/${encodeURIComponent(state.group)}/events/op/subscribe`;
  let ws;
  try {
    ws = new WebSocket(url);
  } catch {
    return fallBack('the live stream is not available');
  }
  state.ws = ws;
  ws.addEventListener('open', () => ws.send(JSON.stringify({ session_id: state.token })));
  const onMessage = (msg) => {
    if (msg.type === 'subscribed') {
      setStatus('live: following the stream');
      clearInterval(state.poll);
      state.poll = setInterval(() => refresh().catch(() => {}), 10_000);
      return;
    }
    const d = msg.data || {};
    if (msg.type === 'vehicle_position') {
      const v = state.vehicles.get(d.device_id);
      if (!v) return soon();
      if (v.position?.at && v.position.at > msg.at) return;
      v.position = { lat: d.lat, lon: d.lon, bearing: d.bearing ?? null, speed_kmh: d.speed_kmh ?? null, at: msg.at };
      if (d.trip_id && d.trip_id !== v.trip?.trip_id) soon();
      placeVehicle(v);
    } else if (['trip_event', 'trip_start', 'trip_end', 'duty_sign_on', 'duty_sign_off'].includes(msg.type)) {
      soon();
    }
  };
  // Each frame is a JSON array of envelopes (the messages of one window of the stream).
  ws.addEventListener('message', (event) => {
    for (const msg of JSON.parse(event.data)) onMessage(msg);
  });
  ws.addEventListener('close', (event) => {
    if (state.ws !== ws || !state.token) return;
    fallBack(`stream closed (${event.code}${event.reason ? ` ${event.reason}` : ''}): polling`);
    setTimeout(() => state.token && connectStream(), 15_000);
  });
}

/** A snapshot soon (debounced): delays move at stop events, duties at sign-on and sign-off. */
function soon() {
  if (state.refreshSoon) return;
  state.refreshSoon = setTimeout(() => {
    state.refreshSoon = null;
    refresh().catch(() => {});
  }, 2000);
}

function fallBack(reason) {
  setStatus(reason);
  clearInterval(state.poll);
  state.poll = setInterval(() => refresh().catch(() => {}), 5_000);
}

async function open() {
  $('login').hidden = true;
  $('map-pane').hidden = false;
  $('logout').hidden = false;
  setStatus('loading the network…');
  try {
    drawNetwork(await api('/live-map/network'));
    await refresh();
    setStatus('connecting to the live stream…');
    connectStream();
  } catch (err) {
    showLogin(String(err.message || err));
  }
}

document.addEventListener('DOMContentLoaded', () => {
  $('login').addEventListener('submit', (e) => void login(e));
  $('logout').addEventListener('click', logout);
  const saved = JSON.parse(sessionStorage.getItem('transit-ops-live') || 'null');
  const group = new URLSearchParams(location.search).get('group');
  if (group) document.querySelector('input[name=group]').value = group;
  if (saved && (!group || group === saved.group)) {
    state.token = saved.token;
    state.group = saved.group;
    open();
  } else showLogin();
});
