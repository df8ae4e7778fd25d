/**
 * The simulator's HTTP client: every call goes through the public API (no database access), so
 * the simulator runs against any service, embedded or not, local or remote. The calls are made by
 * the client generated from the service's own OpenAPI document (src/client): a path, parameter or
 * record that drifts from the document fails the type check here (issue #18 §1).
 */
import { apiClient, type ApiClient as GeneratedClient, type paths } from '../../client/index.js';

export type AdminAuth = { email: string; password: string } | { apiKey: string };

export class HttpStatusError extends Error {
  constructor(readonly status: number, message: string, readonly retryAfterSeconds = 60) {
    super(message);
  }
}

type Json<T> = T extends { content: { 'application/json': infer B } } ? B : never;
type Op<P extends keyof paths, M extends 'get' | 'put' | 'post' | 'delete'> = NonNullable<paths[P][M]>;
type Answer<P extends keyof paths, M extends 'get' | 'put' | 'post' | 'delete'> = Op<P, M> extends { responses: { 200: infer R } } | { responses: { 201: infer R } } ? Json<R> : never;
type Body<P extends keyof paths, M extends 'put' | 'post'> = Op<P, M> extends { requestBody: infer R } ? Extract<Json<R>, object> : never;

/** The rows of a day's planning as PUT …/planning takes them (JSON). */
export type PlanningRows = Extract<Body<'/api/v4/groups/{group_id}/planning', 'put'>, unknown[]>;
/** The published schedule of a service day (GET …/schedule). */
export type DaySchedule = Answer<'/api/v4/groups/{group_id}/schedule', 'get'>;
/** One item of a device batch. */
export type ReportItem = Body<'/api/v4/groups/{group_id}/device/reports', 'post'>['items'][number];

const TIMEOUT_MS = 120_000;

export class ApiClient {
  private token = '';
  private readonly api: GeneratedClient;

  constructor(readonly baseUrl: string, readonly groupId: string, private readonly auth: AdminAuth) {
    // fetch makes a Request of its arguments whatever they are: the timeout given beside the
    // request, not by a copy of it (a city's simulator sends hundreds of batches a second).
    this.api = apiClient({ baseUrl, fetch: (req: Request) => fetch(req, { signal: AbortSignal.timeout(TIMEOUT_MS) }) });
  }

  /** Whether device keys can be made (they need a session, not an API key). */
  get hasSession(): boolean {
    return 'email' in this.auth;
  }

  async login(): Promise<void> {
    if (!('email' in this.auth)) return;
    const { data } = await this.check('POST /login', this.api.POST('/api/v4/login', { body: { email: this.auth.email, password: this.auth.password } }));
    this.token = data.session_id;
  }

  private get path() {
    return { group_id: this.groupId };
  }

  private credential(): Record<string, string> {
    return 'apiKey' in this.auth ? { 'x-api-key': this.auth.apiKey } : { authorization: `Bearer ${this.token}` };
  }

  /** A call with the admin credential; an expired session is opened again once. */
  private async asAdmin<T>(what: string, call: (headers: Record<string, string>) => Promise<{ data?: T; response: Response }>): Promise<T> {
    try {
      return (await this.check(what, call(this.credential()))).data;
    } catch (err) {
      if (!(err instanceof HttpStatusError) || err.status !== 401 || !('email' in this.auth)) throw err;
      await this.login();
      return (await this.check(what, call(this.credential()))).data;
    }
  }

  private async check<T>(what: string, call: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<{ data: T }> {
    const { data, error, response } = await call;
    if (!response.ok) {
      throw new HttpStatusError(response.status, `${what}: ${response.status} ${JSON.stringify(error ?? null).slice(0, 500)}`, Number(response.headers.get('retry-after') ?? 60) || 60);
    }
    return { data: data as T };
  }

  group() {
    return this.asAdmin('GET group', (headers) => this.api.GET('/api/v4/groups/{group_id}', { params: { path: this.path }, headers }));
  }

  schedule(date: string, routeIds?: readonly string[]) {
    const query = { date, ...(routeIds?.length ? { route_id: routeIds.join(',') } : {}) };
    return this.asAdmin('GET schedule', (headers) => this.api.GET('/api/v4/groups/{group_id}/schedule', { params: { path: this.path, query }, headers }));
  }

  planning(date: string) {
    return this.asAdmin('GET planning', (headers) => this.api.GET('/api/v4/groups/{group_id}/planning', { params: { path: this.path, query: { date: date.replaceAll('-', '') } }, headers }));
  }

  putPlanning(rows: PlanningRows, filename: string) {
    return this.asAdmin('PUT planning', (headers) => this.api.PUT('/api/v4/groups/{group_id}/planning', { params: { path: this.path, query: { format: 'json', filename } }, body: rows, headers }));
  }

  devices() {
    return this.asAdmin('GET devices', (headers) => this.api.GET('/api/v4/groups/{group_id}/devices', { params: { path: this.path, query: { archived: false } }, headers }));
  }

  vehicles() {
    return this.asAdmin('GET vehicles', (headers) => this.api.GET('/api/v4/groups/{group_id}/vehicles', { params: { path: this.path }, headers }));
  }

  apiKeys() {
    return this.asAdmin('GET api-keys', (headers) => this.api.GET('/api/v4/groups/{group_id}/api-keys', { params: { path: this.path }, headers }));
  }

  revokeApiKey(apiKeyId: string) {
    return this.asAdmin('DELETE api-key', (headers) => this.api.DELETE('/api/v4/groups/{group_id}/api-keys/{api_key_id}', { params: { path: { ...this.path, api_key_id: apiKeyId } }, headers }));
  }

  createApiKey(body: Body<'/api/v4/groups/{group_id}/api-keys', 'post'>) {
    return this.asAdmin('POST api-keys', (headers) => this.api.POST('/api/v4/groups/{group_id}/api-keys', { params: { path: this.path }, body, headers }));
  }

  createVehicle(body: Body<'/api/v4/groups/{group_id}/vehicles', 'post'>) {
    return this.asAdmin('POST vehicles', (headers) => this.api.POST('/api/v4/groups/{group_id}/vehicles', { params: { path: this.path }, body, headers }));
  }

  createDriver(body: Body<'/api/v4/groups/{group_id}/drivers', 'post'>) {
    return this.asAdmin('POST drivers', (headers) => this.api.POST('/api/v4/groups/{group_id}/drivers', { params: { path: this.path }, body, headers }));
  }

  createDevice(body: Body<'/api/v4/groups/{group_id}/devices', 'post'>) {
    return this.asAdmin('POST devices', (headers) => this.api.POST('/api/v4/groups/{group_id}/devices', { params: { path: this.path }, body, headers }));
  }

  /** A device's batch of reports, with its own key. */
  async reports(key: string, items: readonly ReportItem[]) {
    return (await this.check('POST device/reports', this.api.POST('/api/v4/groups/{group_id}/device/reports', { params: { path: this.path }, body: { items: [...items] }, headers: { 'x-api-key': key } }))).data;
  }
}
