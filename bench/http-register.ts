/**
 * The agent as a service under load: a real `allocrun agent` process, N jobs registered over HTTP (its
 * unix socket, C requests in flight), one allocation each. Prints the time until every allocation runs,
 * the registration rate, and the event stream's latency: from sending a registration to its JobRegistered
 * event on a stream opened before, next to the registration's own response time, measured in the same run.
 *
 * With `--baseline DIR` the same load also runs, in the same run, against the agent of another checkout
 * (DIR/bin/allocrun.js; e.g. a worktree of the commit before the store) and both are printed.
 *
 *   npx tsx bench/http-register.ts [jobs=200] [concurrency=8] [driver=mock|raw_exec] [--quick] [--baseline DIR]
 */
import { request } from 'node:http';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ms, pct, send, startBenchAgent } from './lib/agent-http.ts';
import { discard, scratchDir } from './lib/scratch.ts';

// `--quick` (from `npm run bench -- --quick`) is a smoke run; positional arguments override the sizes.
const quick = process.argv.includes('--quick');
const baselineAt = process.argv.indexOf('--baseline');
const BASELINE = baselineAt > 0 ? process.argv[baselineAt + 1] : undefined;
const args = process.argv.slice(2).filter((a, i, all) => !a.startsWith('--') && all[i - 1] !== '--baseline');
const JOBS = Number(args[0] ?? (quick ? 20 : 200));
const CONCURRENCY = Number(args[1] ?? 8);
const DRIVER = args[2] ?? 'mock';
const BIN = fileURLToPath(new URL('../bin/allocrun.js', import.meta.url));

function job(id: string) {
  const task = DRIVER === 'raw_exec'
    ? { Name: 't', Driver: 'raw_exec', Config: { command: '/bin/sleep', args: ['600'] }, KillTimeout: 1e9 }
    : { Name: 't', Driver: 'mock', Config: { run_for: '1h' } };
  return { Job: { ID: id, Type: 'service', TaskGroups: [{ Name: 'g', Count: 1, Tasks: [task] }] } };
}



/** What one agent's run measured. */
interface Figures {
  registered: number;
  toRunning: number;
  response: number[];
  event: number[];
}

async function measure(bin: string): Promise<Figures> {
  const dataDir = await scratchDir('allocrun-bench-api-');
  const socketPath = join(dataDir, 'agent.sock');
  const agent = await startBenchAgent(bin, dataDir);

  const sent = new Map<string, number>();
  const answered = new Map<string, number>();
  const announced = new Map<string, number>();
  const runningAt = new Map<string, number>();
  let allRunning!: () => void;
  const everyoneRuns = new Promise<void>((r) => (allRunning = r));
  const stream = await new Promise<import('node:http').IncomingMessage>((resolve, reject) => {
    request({ socketPath, path: '/v1/event/stream?topic=Job&topic=Allocation' }, resolve).on('error', reject).end();
  });
  let buf = '';
  stream.setEncoding('utf8').on('data', (d: string) => {
    buf += d;
    const lines = buf.split('\n');
    buf = lines.pop()!;
    const now = performance.now();
    for (const line of lines) {
      const batch = JSON.parse(line) as { Events?: { Topic: string; Type: string; Key: string; FilterKeys: string[]; Payload: { Allocation?: { ClientStatus: string } } }[] };
      for (const e of batch.Events ?? []) {
        if (e.Topic === 'Job' && e.Type === 'JobRegistered' && !announced.has(e.Key)) announced.set(e.Key, now);
        if (e.Topic === 'Allocation' && e.Payload.Allocation?.ClientStatus === 'running' && !runningAt.has(e.FilterKeys[0]!)) {
          runningAt.set(e.FilterKeys[0]!, now);
          if (runningAt.size === JOBS) allRunning();
        }
      }
    }
  });

  const ids = Array.from({ length: JOBS }, (_, i) => `bench-${i}`);
  const start = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < ids.length) {
        const id = ids[next++]!;
        sent.set(id, performance.now());
        await send(socketPath, 'PUT', '/v1/jobs', job(id));
        answered.set(id, performance.now());
      }
    }),
  );
  const registered = performance.now() - start;
  await everyoneRuns;
  const toRunning = performance.now() - start;

  const event = ids.map((id) => announced.get(id)! - sent.get(id)!);
  const response = ids.map((id) => answered.get(id)! - sent.get(id)!);
  stream.destroy();
  for (const id of ids) await send(socketPath, 'DELETE', `/v1/job/${id}?purge=true`);
  agent.kill('SIGTERM');
  await new Promise((r) => agent.once('exit', r));
  await discard(dataDir);
  return { registered, toRunning, response, event };
}

function report(label: string, f: Figures): void {
  console.log(`  ${label}`);
  console.log(`    registered all        ${ms(f.registered)}  (${(JOBS / (f.registered / 1000)).toFixed(0)} jobs/s)`);
  console.log(`    all allocations run   ${ms(f.toRunning)}  (${(f.toRunning / f.registered).toFixed(2)}x the registration time)`);
  console.log(`    response latency      p50 ${ms(pct(f.response, 50))}  p99 ${ms(pct(f.response, 99))}  max ${ms(Math.max(...f.response))}`);
  console.log(`    event-stream latency  p50 ${ms(pct(f.event, 50))}  p99 ${ms(pct(f.event, 99))}  max ${ms(Math.max(...f.event))}  (send → JobRegistered on the stream)`);
}

const mine = await measure(BIN);
const base = BASELINE ? await measure(join(BASELINE, 'bin', 'allocrun.js')) : undefined;
console.log(`allocrun agent API: ${JOBS} jobs (${DRIVER} driver), ${CONCURRENCY} registrations in flight, over the unix socket`);
report('this agent (answers after the store commit)', mine);
if (base) {
  report(`baseline ${BASELINE}`, base);
  console.log(`  this / baseline: jobs/s ${(base.registered / mine.registered).toFixed(2)}x, response p50 ${(pct(mine.response, 50) / pct(base.response, 50)).toFixed(2)}x, p99 ${(pct(mine.response, 99) / pct(base.response, 99)).toFixed(2)}x`);
}
