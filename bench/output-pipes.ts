/**
 * What it costs that the spawner helper opens a supervised task's output pipes and passes them over its
 * channel (spawner.ts `passFds`), as it does for an agent in a worker thread, against the agent opening them
 * itself through `fs`, as on the main thread (output-pipes.ts says why a worker cannot). N stand-in
 * supervisors start at once through the helper,
 * as in P1; each holds two pipes on fds 5 and 6, reports its pid on fd 3 and exits on its go. The rounds of
 * the two ways alternate; printed: the medians of each (wall per round, CPU of this process and the helper
 * per start) and their ratios, measured in the same run.
 * Usage: tsx bench/output-pipes.ts [starts=100] [rounds=7]
 */
import type { Socket } from 'node:net';
import { openHere, passedEnd, type ReadEnd } from '../src/drivers/raw-exec/output-pipes.ts';
import { spawnerReady, spawnViaHelper } from '../src/drivers/raw-exec/spawner.ts';
import { cpuMark, cpuMsSince, fmt, median } from './lib/stats.ts';

const STARTS = Number(process.argv[2] ?? 100);
const ROUNDS = Number(process.argv[3] ?? 7);

/** Like SUPERVISOR_SCRIPT under dash: two pipes held read-write on fds 5 and 6, the pid on fd 3, then the go. */
const STAND_IN = ['exec 5<<E', 'E', 'exec 6<<E', 'E', 'exec 5<>/proc/self/fd/5 6<>/proc/self/fd/6', 'echo $$ >&3', 'read -r go', 'exit 0'].join('\n');

function readers(ends: readonly (ReadEnd | undefined)[]): Socket[] {
  if (ends.length !== 2 || ends.includes(undefined)) throw new Error('the output pipes did not open');
  return ends.map((end) => end!.reader());
}

async function start(passed: boolean): Promise<void> {
  const child = await spawnViaHelper('/bin/sh', ['-c', STAND_IN], { cwd: '/', env: {}, ...(passed && { passFds: [5, 6] }) });
  await child.reported;
  const ends = passed ? child.passed.map((pipe) => pipe && passedEnd(pipe)) : (openHere([5, 6].map((fd) => `/proc/${child.pid}/fd/${fd}`)) as (ReadEnd | undefined)[]);
  const sockets = readers(ends);
  for (const s of sockets) s.resume();
  child.go('go\n');
  await child.exited;
  await Promise.all(sockets.map((s) => new Promise((resolve) => (s.destroyed ? resolve(undefined) : s.once('close', resolve)))));
}

async function round(passed: boolean): Promise<{ wallMs: number; cpuMs: number }> {
  const cpu = cpuMark();
  const t0 = performance.now();
  await Promise.all(Array.from({ length: STARTS }, () => start(passed)));
  return { wallMs: performance.now() - t0, cpuMs: cpuMsSince(cpu) / STARTS };
}

await spawnerReady();
await round(false); // warm-up: JIT, the helper's first forks
await round(true);
const ways = { here: [] as { wallMs: number; cpuMs: number }[], passed: [] as { wallMs: number; cpuMs: number }[] };
for (let i = 0; i < ROUNDS; i++) {
  ways.here.push(await round(false));
  ways.passed.push(await round(true));
}
const wall = (way: keyof typeof ways) => median(ways[way].map((r) => r.wallMs));
const cpu = (way: keyof typeof ways) => median(ways[way].map((r) => r.cpuMs));
console.log(`${STARTS} stand-in supervisors at once, median of ${ROUNDS} rounds each, alternating`);
console.log(`  opened here (fs):        ${fmt(wall('here'), 0)} ms wall, ${fmt(cpu('here'), 3)} ms CPU per start (this process + helper)`);
console.log(`  passed by the helper:    ${fmt(wall('passed'), 0)} ms wall, ${fmt(cpu('passed'), 3)} ms CPU per start`);
console.log(`  passed / here:           wall ${fmt(wall('passed') / wall('here'), 2)}x, CPU ${fmt(cpu('passed') / cpu('here'), 2)}x (+${fmt(cpu('passed') - cpu('here'), 3)} ms per start)`);
