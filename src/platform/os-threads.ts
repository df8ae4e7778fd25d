/**
 * The service's threads as the operating system sees them (Linux, /proc; elsewhere nothing is
 * named or reported). A worker thread names itself (nameThisThread: `top -H`, `ps -L` and
 * /metrics then tell the feeds' and the tracking's threads apart from the service's), and
 * /metrics reports, by thread, the CPU time each took and the time each waited, ready to run, for
 * a CPU (the kernel's schedstat). The second is what a machine short of cores costs: a city's
 * feeds thread on two cores waited 1.4 s of each 3.9-s rebuild for a core (bench/RESULTS.md,
 * 2026-12-06), and the feeds are that much further behind the reports (docs/operations.md, sizing).
 */
import { readdirSync, readFileSync, readlinkSync, writeFileSync } from 'node:fs';

/** The names the service's worker threads give themselves (at most 15 characters: Linux's limit). */
export type ThreadName = 'feeds' | 'tracking';

/** This thread's id in the operating system (Linux: /proc/thread-self), undefined elsewhere. */
export function ownThreadId(): number | undefined {
  try {
    const id = Number(readlinkSync('/proc/thread-self').split('/').pop());
    return Number.isInteger(id) ? id : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Names the calling thread (Linux; elsewhere, or where it cannot, nothing happens: the name only
 * helps whoever looks). A thread it starts afterwards inherits the name: libuv's pool (zlib, file
 * and crypto work) would be counted as this thread's if this thread started it, but the service's
 * thread has started it before any worker runs: in a fresh process whose first work was a worker
 * naming itself and then gzipping, the pool's threads were still unnamed (checked 2026-12-06).
 */
export function nameThisThread(name: ThreadName): void {
  try {
    writeFileSync('/proc/thread-self/comm', name);
  } catch {
    // Not Linux, or /proc not mounted: the thread keeps the process's name.
  }
}

/** What a thread (or the threads of one name) took, in seconds since it started. */
export interface ThreadTimes {
  /** `main` (the service's thread: its id is the process's), a name a thread gave itself, or `other` (V8's and libuv's helpers: garbage collection, compilation, zlib and file work). */
  thread: string;
  /** On a CPU. */
  cpuSeconds: number;
  /** Ready to run, waiting for a CPU. */
  waitSeconds: number;
}

const NAMED: readonly string[] = ['feeds', 'tracking'] satisfies ThreadName[];

/**
 * The process's threads' times by name (ThreadTimes), from /proc/self/task/<id>/schedstat (its
 * first two fields: nanoseconds on a CPU, nanoseconds waiting on a run queue); undefined where
 * there is no such file (not Linux, a kernel without schedstat). A thread that ended is no longer
 * counted: a sum may then go down (a worker thread started again), which Prometheus reads as a
 * counter's reset.
 */
export function threadTimes(): ThreadTimes[] | undefined {
  let ids: string[];
  try {
    ids = readdirSync('/proc/self/task');
  } catch {
    return undefined;
  }
  const byName = new Map<string, ThreadTimes>();
  let read = 0;
  for (const id of ids) {
    let comm: string;
    let stat: string;
    try {
      comm = readFileSync(`/proc/self/task/${id}/comm`, 'utf8').trim();
      stat = readFileSync(`/proc/self/task/${id}/schedstat`, 'utf8');
    } catch {
      // Ended since the directory was read.
      continue;
    }
    const [onCpu, waiting] = stat.split(' ').map(Number);
    if (!Number.isFinite(onCpu) || !Number.isFinite(waiting)) continue;
    const thread = Number(id) === process.pid ? 'main' : NAMED.includes(comm) ? comm : 'other';
    const t = byName.get(thread) ?? { thread, cpuSeconds: 0, waitSeconds: 0 };
    t.cpuSeconds += onCpu! / 1e9;
    t.waitSeconds += waiting! / 1e9;
    byName.set(thread, t);
    read++;
  }
  return read > 0 ? [...byName.values()] : undefined;
}
