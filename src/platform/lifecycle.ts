/**
 * What runs in an app besides its requests (a worker, a listener, a timer, a cache being rebuilt):
 * each is an object made by buildApp, listed in order; the list starts them in that order once the
 * app is ready and closes them in reverse order when it closes. Nothing of the kind lives in a
 * module (test/platform/module-state.test.ts checks it).
 */
export interface Service {
  /** Starts the background work (a first round may be awaited: the app is ready after it). */
  start?(): Promise<void>;
  /** Stops it and waits for work under way; what was accepted is finished or left for the next start. */
  close(): Promise<void>;
  /** Closed before the server stops (preClose): it holds open connections (WebSockets) that must be told to go. */
  readonly closesBeforeServer?: boolean;
}

export class Lifecycle {
  private readonly services: { name: string; service: Service }[] = [];
  private started = false;

  /** Adds a service (in start order); returns it. */
  add<S extends Service>(name: string, service: S): S {
    this.services.push({ name, service });
    return service;
  }

  /** What runs, in start order. */
  get names(): string[] {
    return this.services.map((s) => s.name);
  }

  async start(): Promise<void> {
    if (this.started) return;
    this.started = true;
    for (const { service } of this.services) await service.start?.();
  }

  /** Closes, in reverse order, the services of this phase (before the server stops, or after). */
  async close(phase: 'beforeServer' | 'afterServer' = 'afterServer'): Promise<void> {
    let failed: unknown;
    for (const { service } of [...this.services].reverse()) {
      if ((service.closesBeforeServer === true) !== (phase === 'beforeServer')) continue;
      // One failing close does not keep the others open.
      await service.close().catch((err: unknown) => (failed ??= err));
    }
    if (failed !== undefined) throw failed;
  }
}
