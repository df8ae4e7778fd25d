/**
 * npx tsx bench/cpu-profile.ts FILE.cpuprofile [--top N] [--holds MS] [--from S]: a summary of a V8 CPU profile (as
 * `node --cpu-prof` writes it; bench:network's --cpu-prof makes one of the service):
 *
 * - self time per function (the garbage collector and idle time apart);
 * - inclusive time per function of the project (src/): what it and everything it calls took;
 * - the longest busy stretches (consecutive samples not idle: the event loop held that long,
 *   every request waiting behind it), each with the project's functions that took most of it;
 * - the holds of --holds ms or more (50) together, by the job that asked for the work (the
 *   outermost project function on the stack) and by whose code ran (the innermost project
 *   function or package): a hold is often many short callbacks, none long on its own.
 *
 * --from S leaves out the first S seconds (the service's start: its schemas compiled, its caches filled).
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: Node[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

const { values: args, positionals } = parseArgs({ options: { top: { type: 'string', default: '20' }, holds: { type: 'string', default: '50' }, from: { type: 'string', default: '0' } }, allowPositionals: true });
const TOP = Number(args.top);
const HOLD_MS = Number(args.holds);
/** Seconds from the profile's start before which samples are left out (the service's own start). */
const FROM_US = Number(args.from) * 1e6;
if (!positionals[0]) throw new Error('usage: bench/cpu-profile.ts FILE.cpuprofile [--top N]');
const p = JSON.parse(readFileSync(positionals[0], 'utf8')) as Profile;

const byId = new Map(p.nodes.map((n) => [n.id, n]));
const parent = new Map<number, number>();
for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
const label = (n: Node) => {
  const f = n.callFrame;
  const file = f.url.replace(/^file:\/\//, '').replace(/^.*?\/(src|bench|node_modules)\//, '$1/');
  return `${f.functionName || '(anonymous)'} ${file ? `${file}:${f.lineNumber + 1}` : ''}`.trim();
};
const idle = (n: Node) => ['(idle)', '(program)'].includes(n.callFrame.functionName);
const own = (n: Node) => /\/src\//.test(n.callFrame.url);

/** What a sample was doing for: the outermost project function on its stack (the job that asked for the work). */
function jobOf(n: Node): string {
  let job = '(no project function on the stack)';
  for (let id: number | undefined = n.id; id !== undefined; id = parent.get(id)) if (own(byId.get(id)!)) job = label(byId.get(id)!);
  return job;
}
/** Whose code a sample ran: the innermost project function or package on its stack, else Node's own or V8's (the collector). */
function codeOf(n: Node): string {
  for (let id: number | undefined = n.id; id !== undefined; id = parent.get(id)) {
    const f = byId.get(id)!;
    if (own(f)) return label(f);
    const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(f.callFrame.url);
    if (pkg) return `package ${pkg[1]}`;
  }
  return n.callFrame.url.startsWith('node:') ? `node ${n.callFrame.url.slice(5)}` : n.callFrame.functionName || '(anonymous)';
}
const add = (m: Map<string, number>, k: string, ms: number) => m.set(k, (m.get(k) ?? 0) + ms);

const total = (p.endTime - p.startTime - FROM_US) / 1000;
const self = new Map<string, number>();
const inclusive = new Map<string, number>();
let busy = 0;
const stretches: { start: number; ms: number; frames: Map<string, number>; jobs: Map<string, number>; code: Map<string, number> }[] = [];
let cur: (typeof stretches)[number] | null = null;
let t = p.startTime;
for (let i = 0; i < p.samples.length; i++) {
  const ms = (p.timeDeltas[i + 1] ?? 0) / 1000;
  t += p.timeDeltas[i]!;
  if (t - p.startTime < FROM_US) continue;
  const n = byId.get(p.samples[i]!)!;
  self.set(label(n), (self.get(label(n)) ?? 0) + ms);
  if (idle(n)) {
    cur = null;
    continue;
  }
  busy += ms;
  if (!cur) stretches.push((cur = { start: t, ms: 0, frames: new Map(), jobs: new Map(), code: new Map() }));
  cur.ms += ms;
  add(cur.jobs, jobOf(n), ms);
  add(cur.code, codeOf(n), ms);
  // Each project function on the stack once.
  const seen = new Set<string>();
  for (let id: number | undefined = n.id; id !== undefined; id = parent.get(id)) {
    const f = byId.get(id)!;
    if (!own(f)) continue;
    const l = label(f);
    if (seen.has(l)) continue;
    seen.add(l);
    inclusive.set(l, (inclusive.get(l) ?? 0) + ms);
    cur.frames.set(l, (cur.frames.get(l) ?? 0) + ms);
  }
}

const pct = (ms: number) => `${((100 * ms) / total / 1000 * 1000).toFixed(1)} %`;
const fmtMs = (ms: number) => (ms >= 1000 ? `${(ms / 1000).toFixed(1)} s` : `${ms.toFixed(0)} ms`);
const top = (m: Map<string, number>, n = TOP) => [...m].sort((a, b) => b[1] - a[1]).slice(0, n);

console.log(`profile ${fmtMs(total)}, busy ${fmtMs(busy)} (${pct(busy)})`);
console.log('\nself time:');
for (const [l, ms] of top(self)) console.log(`  ${fmtMs(ms).padStart(8)} ${pct(ms).padStart(7)}  ${l}`);
console.log('\ninclusive time, project functions:');
for (const [l, ms] of top(inclusive)) console.log(`  ${fmtMs(ms).padStart(8)} ${pct(ms).padStart(7)}  ${l}`);
console.log('\nlongest busy stretches (the event loop held):');
for (const s of [...stretches].sort((a, b) => b.ms - a.ms).slice(0, 10)) {
  console.log(`  ${fmtMs(s.ms)} at +${fmtMs((s.start - p.startTime) / 1000)}: ${top(s.frames, 4).map(([l, ms]) => `${l} ${fmtMs(ms)}`).join('; ') || '(outside src/)'}`);
}

// The holds that set a request's tail: every stretch of at least --holds ms, summed by the job
// that asked for the work (outermost project function) and by whose code ran (innermost).
const holds = stretches.filter((s) => s.ms >= HOLD_MS);
const jobs = new Map<string, number>();
const code = new Map<string, number>();
for (const s of holds) {
  for (const [k, ms] of s.jobs) add(jobs, k, ms);
  for (const [k, ms] of s.code) add(code, k, ms);
}
const held = holds.reduce((n, s) => n + s.ms, 0);
console.log(`\nholds of ${HOLD_MS} ms or more: ${holds.length}, ${fmtMs(held)} in all; by the job that asked for the work:`);
for (const [l, ms] of top(jobs)) console.log(`  ${fmtMs(ms).padStart(8)} ${((100 * ms) / held).toFixed(1).padStart(5)} %  ${l}`);
console.log('by whose code ran:');
for (const [l, ms] of top(code)) console.log(`  ${fmtMs(ms).padStart(8)} ${((100 * ms) / held).toFixed(1).padStart(5)} %  ${l}`);
