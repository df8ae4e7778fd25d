/**
 * The simulator's HTTP client: every call goes through the public API (no database access), so
 * the simulator runs against any service, embedded or not, local or remote.
 */
export type AdminAuth = { email: string; password: string } | { apiKey: string };

export class HttpStatusError extends Error {
  constructor(readonly status: number, message: string, readonly retryAfterSeconds = 60) {
    super(message);
  }
}

export class ApiClient {
  private token = '';

  constructor(readonly baseUrl: string, readonly groupId: string, private readonly auth: AdminAuth) {}

  /** Whether device keys can be made (they need a session, not an API key). */
  get hasSession(): boolean {
    return 'email' in this.auth;
  }

  async login(): Promise<void> {
    if (!('email' in this.auth)) return;
    const res = await fetch(`${this.baseUrl}/api/v4/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ email: this.auth.email, password: this.auth.password }).toString(),
    });
    if (!res.ok) throw new Error(`login as ${this.auth.email} failed: ${res.status} ${await res.text()}`);
    this.token = ((await res.json()) as { session_id: string }).session_id;
  }

  /** A call under /api/v4/groups/{group_id} with the admin credential; an expired session is opened again once. */
  async group<T>(method: string, path: string, body?: unknown): Promise<T> {
    const call = () => this.request<T>(method, `/api/v4/groups/${encodeURIComponent(this.groupId)}${path}`, this.credential(), body);
    try {
      return await call();
    } catch (err) {
      if (!(err instanceof HttpStatusError) || err.status !== 401 || !('email' in this.auth)) throw err;
      await this.login();
      return call();
    }
  }

  /** A device's batch of reports, with its own key. */
  async reports(key: string, items: readonly unknown[]): Promise<{ accepted: string[]; duplicates: string[]; rejected: unknown[] }> {
    return this.request('POST', `/api/v4/groups/${encodeURIComponent(this.groupId)}/device/reports`, { 'x-api-key': key }, { items });
  }

  private credential(): Record<string, string> {
    return 'apiKey' in this.auth ? { 'x-api-key': this.auth.apiKey } : { authorization: `Bearer ${this.token}` };
  }

  async request<T>(method: string, path: string, headers: Record<string, string>, body?: unknown): Promise<T> {
    const res = await fetch(`${this.baseUrl}${path}`, {
      method,
      headers: { ...headers, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      signal: AbortSignal.timeout(120_000),
    });
    const text = await res.text();
    if (!res.ok) throw new HttpStatusError(res.status, `${method} ${path}: ${res.status} ${text.slice(0, 500)}`, Number(res.headers.get('retry-after') ?? 60) || 60);
    return (text ? JSON.parse(text) : null) as T;
  }
}
