// The control room's console (issue #19): login with the API's own session, then views selected
// by the URL's hash: #map, #trips, #trip/<trip_id>, #stringline, #dashboard.
import { ApiError, canAct, currentSession, login, logout, restoreSession, whenExpired, type Session } from './api';
import { Dashboard } from './dashboard';
import { DetourEditor } from './detour';
import { MapView } from './map';
import { Store } from './store';
import { LiveStream } from './stream';
import { StringLine } from './stringline';
import { TripStory } from './trip';
import { TripsTable } from './trips';
import { $ } from './util';
import './style.css';

interface App {
  store: Store;
  stream: LiveStream;
  map: MapView;
  trips: TripsTable;
  trip: TripStory;
  stringline: StringLine;
  dashboard: Dashboard;
  detour: DetourEditor;
}

let app: App | null = null;
const VIEWS = ['map', 'trips', 'trip', 'stringline', 'dashboard', 'detour'] as const;

function setStatus(text: string): void {
  $('status').textContent = text;
}

function showLogin(message = ''): void {
  $('login').hidden = false;
  $('nav').hidden = true;
  $('logout').hidden = true;
  $('who').textContent = '';
  for (const v of VIEWS) $(`view-${v}`).hidden = true;
  $('login-error').textContent = message;
  setStatus('not connected');
}

async function open(session: Session): Promise<void> {
  $('login').hidden = true;
  $('nav').hidden = false;
  $('logout').hidden = false;
  $('who').textContent = `${session.email} · ${session.role}${session.teams.length ? ` (${session.teams.join(', ')})` : ''}`;
  document.body.dataset['role'] = session.role;
  document.body.dataset['canAct'] = String(canAct(session));
  setStatus('loading…');
  const store = new Store();
  const stream = new LiveStream(session.group, session.token, setStatus);
  const openTrip = (id: string, date = store.date) => {
    location.hash = `#trip/${encodeURIComponent(id)}/${date}`;
  };
  app = {
    store,
    stream,
    map: new MapView($('view-map'), store, openTrip),
    trips: new TripsTable($('view-trips'), store, openTrip),
    trip: new TripStory($('view-trip'), store),
    stringline: new StringLine($('view-stringline'), store),
    dashboard: new Dashboard($('view-dashboard'), store),
    detour: new DetourEditor($('view-detour'), store),
  };
  (window as unknown as { transitConsole: unknown }).transitConsole = app;
  try {
    await store.load();
  } catch (err) {
    showLogin(err instanceof Error ? err.message : String(err));
    return;
  }
  store.follow(stream);
  stream.start();
  route();
}

async function route(): Promise<void> {
  if (!app) return;
  const [view = 'map', ...rest] = location.hash.replace(/^#/, '').split('/');
  const name = (VIEWS as readonly string[]).includes(view) ? (view as (typeof VIEWS)[number]) : 'map';
  for (const v of VIEWS) $(`view-${v}`).hidden = v !== name;
  for (const a of document.querySelectorAll<HTMLAnchorElement>('#nav a')) {
    if (a.dataset['view'] === name) a.setAttribute('aria-current', 'page');
    else a.removeAttribute('aria-current');
  }
  try {
    if (name === 'map') {
      await app.map.mount();
      app.map.resize();
    } else if (name === 'trips') app.trips.mount();
    else if (name === 'trip') await app.trip.show(decodeURIComponent(rest[0] ?? ''), rest[1] ?? app.store.date);
    else if (name === 'stringline') await app.stringline.mount();
    else if (name === 'dashboard') await app.dashboard.mount();
    else if (name === 'detour') await app.detour.show(decodeURIComponent(rest[0] ?? ''), rest[1] ?? app.store.date);
  } catch (err) {
    setStatus(err instanceof ApiError ? err.message : String(err));
  }
}

async function close(): Promise<void> {
  app?.stream.stop();
  app?.store.stop();
  app?.map.map?.remove();
  app?.detour.map?.remove();
  app = null;
  await logout();
  location.hash = '';
  showLogin();
}

document.addEventListener('DOMContentLoaded', () => {
  whenExpired(() => {
    app?.stream.stop();
    app?.store.stop();
    app = null;
    showLogin('Your session has ended: log in again.');
  });
  $('login').addEventListener('submit', (event) => {
    event.preventDefault();
    const form = new FormData(event.target as HTMLFormElement);
    login(String(form.get('group') || 'demo'), String(form.get('email')), String(form.get('password')))
      .then(open)
      .catch((err: unknown) => showLogin(err instanceof Error ? err.message : String(err)));
  });
  $('logout').addEventListener('click', () => void close());
  window.addEventListener('hashchange', () => void route());
  const group = new URLSearchParams(location.search).get('group');
  if (group) ($('login').querySelector('input[name=group]') as HTMLInputElement).value = group;
  const saved = restoreSession();
  if (saved && (!group || group === saved.group)) void open(saved);
  else showLogin();
  void currentSession;
});
