/**
 * P6: what an idle agent costs. A child process runs an agent with the built-in hooks on and N raw_exec
 * allocations of `sleep`, then measures its own CPU while they sit idle (nobody reading stats), and again
 * while a subscriber watches every allocation's stats, plus its RSS per idle allocation. The parent
 * tracks every task's pid and reaps them if the child fails. Then the same after an agent restart: a new
 * agent restores the allocations and adopts their live workloads (it is not their parent, so it learns of
 * their exits from their supervisors' pipes, with a slow /proc poll as a backstop).
 *
 *   npx tsx bench/p6-idle.ts [--quick] [--n 300] [--seconds 30]
 */
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { benchArgs, isMain } from './lib/args.ts';
import type { IdleAgentMessage } from './lib/idle-agent.ts';
import { killTracked, trackPid } from './lib/pids.ts';
import { P6_GOAL } from './lib/goals.ts';
import { fmt, printGoalRows, printTable, type GoalRow } from './lib/stats.ts';

type Result = Extract<IdleAgentMessage, { type: 'result' }>;

/** Runs the idle agent in a child and returns its report. */
export async function runP6(opts: { n: number; idleSec: number; watchedSec: number; settleSec?: number; restart?: boolean }): Promise<Result> {
  const argv = [String(opts.n), String(opts.idleSec), String(opts.watchedSec), String(opts.settleSec ?? 2), ...(opts.restart ? ['restart'] : [])];
  const child = fork(fileURLToPath(new URL('./lib/idle-agent.ts', import.meta.url)), argv, {
    execArgv: ['--import', 'tsx', '--expose-gc'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  trackPid(child.pid);
  let result: Result | undefined;
  child.on('message', (m: IdleAgentMessage) => {
    if (m.type === 'pids') for (const pid of m.pids) trackPid(pid);
    else result = m;
  });
  const code = await new Promise<number | null>((resolve) => child.on('exit', (c) => resolve(c)));
  killTracked();
  if (!result) throw new Error(`the idle agent exited (${code}) without a result`);
  return result;
}

/** CPU as a percentage of one core. */
const corePct = (cpuMs: number, sec: number) => (cpuMs / (sec * 1000)) * 100;

/** The README rows for P6: a fresh agent, and one restarted under the same allocations. */
export function p6Goals(r: Result, restarted: Result): GoalRow[] {
  const idle = corePct(r.idleCpuMs, r.idleSec);
  const idleRestarted = corePct(restarted.idleCpuMs, restarted.idleSec);
  return [
    {
      item: `P6 idle agent, ${r.allocs} raw_exec allocs, built-in hooks`,
      figure: `${fmt(idle, 2)}% of a core; ${fmt((r.rssIdle - r.rssBefore) / r.allocs / 1024, 0)} KB RSS per alloc`,
      baseline: `stats watched: ${fmt(corePct(r.watchedCpuMs, r.watchedSec), 2)}%`,
      ratio: '',
      goal: P6_GOAL.text,
      met: P6_GOAL.met(idle),
    },
    {
      item: `P6 idle agent after a restart (${restarted.allocs} adopted workloads)`,
      figure: `${fmt(idleRestarted, 2)}% of a core`,
      baseline: `stats watched: ${fmt(corePct(restarted.watchedCpuMs, restarted.watchedSec), 2)}%`,
      ratio: '',
      goal: P6_GOAL.text,
      met: P6_GOAL.met(idleRestarted),
    },
  ];
}

function printRun(title: string, r: Result): void {
  console.log(title);
  printTable(
    ['window', 'seconds', 'CPU ms', '% of one core'],
    [
      ['idle, nobody reading stats', String(r.idleSec), fmt(r.idleCpuMs, 0), fmt(corePct(r.idleCpuMs, r.idleSec), 2)],
      ['idle, stats$ watched on every alloc', String(r.watchedSec), fmt(r.watchedCpuMs, 0), fmt(corePct(r.watchedCpuMs, r.watchedSec), 2)],
    ],
  );
}

if (isMain(import.meta.url)) {
  const args = benchArgs({ n: 300, quickN: 5, rounds: 1 });
  const i = process.argv.indexOf('--seconds');
  const idleSec = i >= 0 ? Number(process.argv[i + 1]) : args.quick ? 2 : 30;
  const windows = { n: args.n, idleSec, watchedSec: Math.max(1, Math.round(idleSec / 3)) };
  const r = await runP6(windows);
  printRun(`P6: an agent with ${r.allocs} idle raw_exec \`sleep\` allocations (built-in hooks on); started in ${fmt(r.startMs, 0)} ms`, r);
  console.log(`RSS: ${fmt(r.rssBefore / 1048576, 1)} MiB before, ${fmt(r.rssIdle / 1048576, 1)} MiB idle: ${fmt((r.rssIdle - r.rssBefore) / r.allocs / 1024, 1)} KB per alloc`);
  const restarted = await runP6({ ...windows, restart: true });
  printRun(`P6 after an agent restart: a new agent restored the ${restarted.allocs} allocations and adopted their workloads`, restarted);
  printGoalRows(p6Goals(r, restarted));
}
