/**
 * What the raw_exec supervisor costs: start + wait of a task that exits at once (`/bin/true`), through
 * raw_exec with and without its supervisor, and a bare `child_process.spawn` as the floor, each with the CPU
 * of the processes it started (the supervisor's processes and the task's); plus the supervisor's memory
 * while a task runs. Prints figures and ratios measured in the same run.
 * Usage: tsx bench/supervisor-spawn.ts [--quick] [runs]
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { realClock } from '../src/drivers/clock.ts';
import { createRawExecDriver } from '../src/drivers/raw-exec/raw-exec-driver.ts';
import { spawnerPid, spawnerReady } from '../src/drivers/raw-exec/spawner.ts';
import type { TaskSpec } from '../src/jobspec/types.ts';
import { reapedChildrenCpuMs } from './lib/pids.ts';
import { discard, scratchDir } from './lib/scratch.ts';

const args = process.argv.slice(2);
const runs = Number(args.find((a) => /^\d+$/.test(a)) ?? (args.includes('--quick') ? 30 : 200));
const root = await scratchDir('allocrun-bench-sup-');
const signal = new AbortController().signal;
const task = (command: string, a: string[] = []): TaskSpec => ({ name: 't', driver: 'raw_exec', config: { command, args: a } });

function bare(): Promise<void> {
  return new Promise((resolve, reject) => {
    const c = spawn('/bin/true', [], { detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    c.once('error', reject);
    c.once('exit', () => resolve());
  });
}

async function viaDriver(supervise: boolean, i: number): Promise<void> {
  const dir = join(root, `${supervise ? 's' : 'u'}${i}`);
  const c = createRawExecDriver({ supervise }).controller(task('/bin/true'), { allocId: 'b', env: {}, taskDir: join(dir, 't'), allocDir: dir, clock: realClock, attempt: 1 });
  await c.prepare(signal);
  await c.start(signal);
  await c.wait(signal);
  await c.close();
}

/**
 * Times `fn` per start, and the CPU of the processes it started (`reapedCpuMs`: the CPU of the children their
 * parent has reaped, theirs included): the task's processes, which the agent's own CPU does not show.
 */
async function time(name: string, fn: (i: number) => Promise<void>, reapedCpuMs: () => number): Promise<number> {
  for (let i = 0; i < 5; i++) await fn(-1 - i); // warm-up
  const c0 = reapedCpuMs();
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < runs; i++) await fn(i);
  const ms = Number(process.hrtime.bigint() - t0) / 1e6 / runs;
  const cpu = (reapedCpuMs() - c0) / runs;
  console.log(`${name.padEnd(34)} ${ms.toFixed(2)} ms per start+exit, ${cpu.toFixed(2)} ms CPU of its processes`);
  return ms;
}

/** This process's reaped children (a bare spawn, an unsupervised workload). */
const ownChildrenCpuMs = () => reapedChildrenCpuMs(process.pid) ?? NaN;
/** The spawner helper's reaped children: the supervisors, with the workloads they reaped. */
const supervisorsCpuMs = () => {
  const helper = spawnerPid();
  return helper === undefined ? 0 : (reapedChildrenCpuMs(helper) ?? NaN);
};

/** RSS of the supervisor of a running task, from /proc. */
async function supervisorRssKb(): Promise<number> {
  const dir = join(root, 'rss');
  const c = createRawExecDriver().controller(task('/bin/sleep', ['30']), { allocId: 'b', env: {}, taskDir: join(dir, 't'), allocDir: dir, clock: realClock, attempt: 1 });
  await c.prepare(signal);
  await c.start(signal);
  const sup = (c.handle()!.state as { supervisor: { pid: number } }).supervisor.pid;
  const kb = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${sup}/status`, 'utf8'))?.[1] ?? NaN);
  await c.terminate(signal);
  await c.close();
  return kb;
}

console.log(`raw_exec supervisor cost, ${runs} runs each (this machine, same run)`);
const floor = await time('bare child_process.spawn', () => bare(), ownChildrenCpuMs);
const plain = await time('raw_exec without supervisor', (i) => viaDriver(false, i), ownChildrenCpuMs);
await spawnerReady();
const supervised = await time('raw_exec with supervisor', (i) => viaDriver(true, i), supervisorsCpuMs);
console.log(`supervised / unsupervised: ${(supervised / plain).toFixed(2)}x (+${(supervised - plain).toFixed(2)} ms per start)`);
console.log(`unsupervised / bare spawn: ${(plain / floor).toFixed(2)}x`);
console.log(`supervisor RSS while its task runs: ${await supervisorRssKb()} kB`);
await discard(root);
