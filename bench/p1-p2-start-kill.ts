/**
 * P1 and P2, from one experiment: N single-task raw_exec allocations of `sleep` under one agent,
 * P1 from `run` to every one running, P2 from KILL to every one terminal; against N plain
 * `child_process.spawn`s of the same command started and signalled, a bare XState allocation per process
 * (the least a statechart runner adds), and pm2 starting and stopping them, all in the same run (see
 * bench/lib/start-kill.ts).
 *
 *   npx tsx bench/p1-p2-start-kill.ts [--quick] [--n 100] [--rounds 3] [--no-pm2]
 */
import { benchArgs } from './lib/args.ts';
import { describeProbe } from './lib/scratch.ts';
import { measureStartKill, printPhase } from './lib/start-kill.ts';

const args = benchArgs({ n: 100, quickN: 5 });
const r = await measureStartKill({ ...args, withPm2: !process.argv.includes('--no-pm2') });
console.log(describeProbe(r.fileSystem.at, r.fileSystem.probe));
printPhase(r, 'start');
console.log('');
printPhase(r, 'kill');
// pm2's client library keeps handles open after disconnect(); every process this bench started is reaped
// by now (measureStartKill's finally), so end explicitly instead of hanging.
process.exit(process.exitCode ?? 0);
