/**
 * Blocking queries under load: a real `allocrun agent`, W clients blocked on lists (`/v1/jobs?index=N`,
 * `/v1/allocations?index=N`, `/v1/job/:id/allocations?index=N` from the job's registration on, in turn), each
 * asking again with the index it got as soon as it is answered, and S event streams, while N jobs are registered (C in flight). Prints the
 * registration's response p50/p99 and the bytes the watchers and streams received per index change, next
 * to the same registrations without watchers (the ratio of the two).
 *
 * With `--baseline DIR` the loaded run also goes against the agent of another checkout (DIR/bin/allocrun.js,
 * e.g. a worktree of the commit before a change), in the same run.
 *
 *   npx tsx bench/blocking-watchers.ts [jobs=200] [concurrency=1] [--watchers 50] [--streams 10] [--no-gzip] [--all-lists] [--quick] [--baseline DIR]
 */
import { readFileSync } from 'node:fs';
import { request, type ClientRequest, type IncomingMessage } from 'node:http';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { mockJob, ms, pct, send, startBenchAgent } from './lib/agent-http.ts';
import { discard, scratchDir } from './lib/scratch.ts';

const argv = process.argv.slice(2);
const quick = argv.includes('--quick');
const option = (name: string, fallback: number): number => {
  const at = argv.indexOf(name);
  return at >= 0 ? Number(argv[at + 1]) : fallback;
};
const valued = new Set(['--watchers', '--streams', '--baseline']);
const positional = argv.filter((a, i) => !a.startsWith('--') && !valued.has(argv[i - 1] ?? ''));
const JOBS = Number(positional[0] ?? (quick ? 20 : 200));
const CONCURRENCY = Number(positional[1] ?? 1);
const WATCHERS = option('--watchers', 50);
const STREAMS = option('--streams', 10);
// Watchers ask for gzip as Go's HTTP client (so Nomad's own) does, unless `--no-gzip`; bytes are counted on the wire.
const GZIP = !argv.includes('--no-gzip');
const ALL_LISTS = argv.includes('--all-lists');
const baselineAt = argv.indexOf('--baseline');
const BASELINE = baselineAt >= 0 ? argv[baselineAt + 1] : undefined;
const BIN = fileURLToPath(new URL('../bin/allocrun.js', import.meta.url));

const job = mockJob;



/** What one run measured. */
interface Figures {
  response: number[];
  registered: number;
  /** Bytes the watchers and the streams received from the first registration until every allocation ran. */
  bytes: number;
  /** Index changes in that time (distinct indexes on the first stream, or 0 without streams). */
  changes: number;
  answers: number;
  /** Of `bytes`, what the list watchers received (the rest went to the streams). */
  listBytes: number;
  /** The agent's CPU time (user + system, all its threads) from the first registration until every allocation ran, ms; NaN without /proc. */
  agentCpu: number;
}

/**
 * A process's CPU time so far (user + system), ms, from /proc (Linux); NaN elsewhere. On a box shared with other
 * work the response times move with the neighbours, the CPU the agent spends per registration much less.
 */
function cpuMs(pid: number | undefined): number {
  try {
    // Fields 14 and 15 (utime, stime) in clock ticks (USER_HZ, 100 on Linux), counted after the `(comm)` field, which may hold spaces.
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
  } catch {
    return NaN;
  }
}

/** A client blocked on `path`, asking again with each answer's X-Nomad-Index until stopped. */
function watch(socketPath: string, path: string, count: (bytes: number) => void): () => void {
  let stopped = false;
  let current: ClientRequest | undefined;
  const ask = (index: number) => {
    if (stopped) return;
    current = request({ socketPath, path: `${path}${path.includes('?') ? '&' : '?'}index=${index}&wait=5m`, headers: GZIP ? { 'accept-encoding': 'gzip' } : {} }, (res) => {
      const next = Number(res.headers['x-nomad-index'] ?? index);
      res.on('data', (d: Buffer) => count(d.length)).on('end', () => ask(next));
    });
    current.on('error', () => undefined);
    current.end();
  };
  ask(1);
  return () => {
    stopped = true;
    current?.destroy();
  };
}

async function measure(bin: string, watchers: number, streams: number): Promise<Figures> {
  const dataDir = await scratchDir('allocrun-bench-watch-');
  const socketPath = join(dataDir, 'agent.sock');
  const agent = await startBenchAgent(bin, dataDir);

  let counting = false;
  let bytes = 0;
  let answers = 0;
  const count = (n: number) => {
    if (counting) bytes += n;
  };
  const ids = Array.from({ length: JOBS }, (_, i) => `bench-${i}`);
  // `--all-lists` adds watchers of the evaluations and deployments lists (each a list cache of its own scope).
  const kinds = ['/v1/jobs', '/v1/allocations', 'job', ...(ALL_LISTS ? ['/v1/evaluations', '/v1/deployments'] : [])];
  const stops: (() => void)[] = [];
  let listBytes = 0;
  const counted = (n: number) => {
    count(n);
    if (counting) (answers++, (listBytes += n));
  };
  // A job's allocation list is watched from its registration's answer on, as `nomad job run`'s monitor does.
  const watchedJobs = new Map<string, number>();
  for (let i = 0; i < watchers; i++) {
    const kind = kinds[i % kinds.length]!;
    if (kind !== 'job') stops.push(watch(socketPath, kind, counted));
    else {
      const id = ids[(i * 7) % ids.length]!;
      watchedJobs.set(id, (watchedJobs.get(id) ?? 0) + 1);
    }
  }

  const runningAt = new Set<string>();
  const indexes = new Set<number>();
  let allRunning!: () => void;
  const everyoneRuns = new Promise<void>((r) => (allRunning = r));
  const opened: IncomingMessage[] = [];
  // One stream (not counted when streams = 0) tells when every allocation runs.
  for (let s = 0; s < Math.max(1, streams); s++) {
    const counted = s < streams;
    const stream = await new Promise<IncomingMessage>((resolve, reject) => request({ socketPath, path: '/v1/event/stream' }, resolve).on('error', reject).end());
    opened.push(stream);
    if (s > 0) {
      stream.on('data', (d: Buffer) => count(d.length));
      continue;
    }
    let buf = '';
    stream.on('data', (d: Buffer) => {
      if (counted) count(d.length);
      buf += d.toString('utf8');
      const lines = buf.split('\n');
      buf = lines.pop()!;
      for (const line of lines) {
        const batch = JSON.parse(line) as { Index?: number; Events?: { Topic: string; FilterKeys: string[]; Payload: { Allocation?: { ClientStatus: string } } }[] };
        if (counting && batch.Index) indexes.add(batch.Index);
        for (const e of batch.Events ?? []) {
          if (e.Topic === 'Allocation' && e.Payload.Allocation?.ClientStatus === 'running' && !runningAt.has(e.FilterKeys[0]!)) {
            runningAt.add(e.FilterKeys[0]!);
            if (runningAt.size === JOBS) allRunning();
          }
        }
      }
    });
  }

  const response: number[] = [];
  const cpuBefore = cpuMs(agent.pid);
  counting = true;
  const start = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < ids.length) {
        const id = ids[next++]!;
        const sent = performance.now();
        await send(socketPath, 'PUT', '/v1/jobs', job(id));
        response.push(performance.now() - sent);
        for (let w = 0; w < (watchedJobs.get(id) ?? 0); w++) stops.push(watch(socketPath, `/v1/job/${id}/allocations`, counted));
      }
    }),
  );
  const registered = performance.now() - start;
  await everyoneRuns;
  counting = false;
  const agentCpu = cpuMs(agent.pid) - cpuBefore;

  for (const stop of stops) stop();
  for (const s of opened) s.destroy();
  agent.kill('SIGTERM');
  await new Promise((r) => agent.once('exit', r));
  await discard(dataDir);
  return { response, registered, bytes, changes: streams > 0 ? indexes.size : 0, answers, listBytes, agentCpu };
}

const mib = (b: number) => `${(b / 1024 / 1024).toFixed(1)} MiB`;
const kib = (b: number) => `${(b / 1024).toFixed(1)} KiB`;

function report(label: string, f: Figures): void {
  console.log(`  ${label}`);
  console.log(`    register response   p50 ${ms(pct(f.response, 50))}  p99 ${ms(pct(f.response, 99))}  max ${ms(Math.max(...f.response))}  (${(JOBS / (f.registered / 1000)).toFixed(0)} jobs/s)`);
  if (!Number.isNaN(f.agentCpu)) console.log(`    agent CPU           ${(f.agentCpu / JOBS).toFixed(2)} ms per registration (${(f.agentCpu / 1000).toFixed(2)} s until every allocation ran)`);
  if (f.bytes > 0) {
    const perChange = f.changes > 0 ? `, ${kib(f.bytes / f.changes)} per change (${f.changes} changes)` : '';
    console.log(`    sent to watchers    ${mib(f.bytes)} in ${(f.registered / 1000).toFixed(1)} s of registering${perChange}`);
    console.log(`                        lists ${mib(f.listBytes)} in ${f.answers} answers, streams ${mib(f.bytes - f.listBytes)}`);
  }
}

const alone = await measure(BIN, 0, 0);
const loaded = await measure(BIN, WATCHERS, STREAMS);
const base = BASELINE ? await measure(join(BASELINE, 'bin', 'allocrun.js'), WATCHERS, STREAMS) : undefined;
console.log(`allocrun agent, blocking queries: ${JOBS} jobs (mock driver), ${CONCURRENCY} registrations in flight, over the unix socket; watchers ${GZIP ? 'accept gzip' : 'without gzip'}`);
report('no watchers', alone);
report(`${WATCHERS} blocked list watchers + ${STREAMS} event streams`, loaded);
console.log(`  watched / alone: register p50 ${(pct(loaded.response, 50) / pct(alone.response, 50)).toFixed(2)}x, p99 ${(pct(loaded.response, 99) / pct(alone.response, 99)).toFixed(2)}x`);
if (base) {
  report(`baseline ${BASELINE}, same watchers`, base);
  console.log(`  this / baseline (watched): register p99 ${(pct(loaded.response, 99) / pct(base.response, 99)).toFixed(2)}x, bytes per change ${(loaded.bytes / Math.max(1, loaded.changes) / (base.bytes / Math.max(1, base.changes))).toFixed(2)}x`);
}
