/**
 * SIGKILL a real agent at random moments while clients register, update, stop and restart through its API,
 * restart it on the same data dir, and check what it promised: every acknowledged write is there, every
 * job has the allocations it asks for (and a stopped job none running), no task was started twice, and no
 * task process outlives its job. A few kills here; AGENT_CRASH_KILLS=30 (or more) for the long run.
 */
import { readFileSync, existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startCli, type CliProcess } from '../cli/spawn-cli.ts';
import { call, processRunning, waitForAllocs, type Alloc } from './agent-process.ts';

const KILLS = Number(process.env.AGENT_CRASH_KILLS ?? 3);
const SEED = Number(process.env.AGENT_CRASH_SEED ?? Date.now() % 100_000);

/** A small seeded generator, so a failing run can be repeated with AGENT_CRASH_SEED. */
function random(seed: number): () => number {
  let s = seed >>> 0 || 1;
  return () => ((s = (s * 1_664_525 + 1_013_904_223) >>> 0) / 2 ** 32);
}

/** What a client was told, or is still waiting to hear, about one job. */
interface JobTruth {
  /** The content of the newest acknowledged write: the tag it ran with, or stopped. */
  acked?: { tag: string; count: number } | 'stopped';
  ackedIndex: number;
  /** A write sent but not answered when the agent died: it may or may not have landed. */
  inFlight?: { tag: string; count: number } | 'stopped';
}

let root: string;
let agent: CliProcess | undefined;
const taskPids = new Set<number>();

function apiJob(id: string, tag: string, count: number, starts: string) {
  // The task notes its pid and allocation, then becomes the sleeper (exec keeps the pid).
  const script = `echo "$NOMAD_ALLOC_ID $$" >> ${starts}; exec /bin/sleep 600`;
  return {
    Job: {
      ID: id, Type: 'service', Meta: { tag },
      TaskGroups: [{ Name: 'g', Count: count, Tasks: [{ Name: 't', Driver: 'raw_exec', Config: { command: '/bin/sh', args: ['-c', script] }, KillTimeout: 1e9 }] }],
    },
  };
}

function starts(file: string): { alloc: string; pid: number }[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8').trim().split('\n').filter(Boolean).map((l) => {
    const [alloc, pid] = l.split(' ');
    return { alloc: alloc!, pid: Number(pid) };
  });
}


let agentsStarted = 0;
/** `p`, or a failure saying `why()` once `ms` have passed: a heal that never comes fails, it does not hang. */
async function within<T>(ms: number, p: Promise<T>, why: () => Promise<string>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => (timer = setTimeout(() => void why().then((w) => reject(new Error(w)), reject), ms)));
  try {
    return await Promise.race([p, late]);
  } finally {
    clearTimeout(timer);
  }
}

async function startAgentOn(dataDir: string): Promise<CliProcess> {
  const cli = startCli(['agent', '--data-dir', dataDir, '--json'], { timeoutMs: 20 * 60_000 });
  if (process.env.AGENT_CRASH_DEBUG) {
    const n = ++agentsStarted;
    const { appendFileSync } = await import('node:fs');
    cli.child.stdout!.on('data', (d: Buffer) => appendFileSync(join(dataDir, '..', `agent-${n}.log`), d));
  }
  await cli.waitFor(/API listening on \//);
  return cli;
}

afterAll(async () => {
  agent?.child.kill('SIGKILL');
  // Only the pids this test's tasks wrote down: never by name.
  for (const pid of taskPids) if (processRunning(pid)) process.kill(pid, 'SIGKILL');
  if (root && !process.env.AGENT_CRASH_DEBUG) await rm(root, { recursive: true, force: true, maxRetries: 5, retryDelay: 200 });
}, 60_000);

describe('an agent killed at random moments under API load', { timeout: 30 * 60_000 }, () => {
  it(`keeps every acknowledged write and heals on restart (${KILLS} kills, seed ${SEED})`, async () => {
    root = await mkdtemp(join(tmpdir(), 'allocrun-crash-'));
    const dataDir = join(root, 'data');
    const startsFile = join(root, 'starts');
    const socket = { socketPath: join(dataDir, 'agent.sock') };
    const rand = random(SEED);
    const jobs = new Map<string, JobTruth>();
    /** Restarts sent per allocation (acknowledged or cut short by a kill): each may start its task once more. */
    const restarts = new Map<string, number>();
    let restartsAcked = 0;
    let next = 0;

    for (let round = 0; round < KILLS; round++) {
      agent = await startAgentOn(dataDir);
      const pid = agent.child.pid!;
      let dead = false;
      // Clients: each works on its own jobs one write at a time, so the one write in flight at the kill is known.
      const client = async (c: number) => {
        const mine: string[] = [];
        while (!dead) {
          const existing = mine.filter((id) => jobs.get(id)!.acked !== 'stopped');
          const roll = rand();
          let id: string;
          let write: { tag: string; count: number } | 'stopped';
          if (existing.length === 0 || roll < 0.4) {
            id = `r${round}c${c}j${next++}`;
            mine.push(id);
            jobs.set(id, { ackedIndex: 0 });
            write = { tag: `t${next}`, count: 1 + Math.floor(rand() * 2) };
          } else {
            id = existing[Math.floor(rand() * existing.length)]!;
            write = roll < 0.8 ? { tag: `t${next++}`, count: 1 + Math.floor(rand() * 2) } : 'stopped';
          }
          const truth = jobs.get(id)!;
          truth.inFlight = write;
          try {
            const res = write === 'stopped' ? await call(socket, 'DELETE', `/v1/job/${id}`) : await call(socket, 'PUT', '/v1/jobs', apiJob(id, write.tag, write.count, startsFile));
            if (res.status !== 200) throw new Error(`${res.status} ${res.text}`);
            truth.acked = write;
            truth.ackedIndex = res.json<{ JobModifyIndex: number }>().JobModifyIndex;
            truth.inFlight = undefined;
          } catch (err) {
            if (!dead) throw err;
            return;
          }
        }
      };
      // One more client restarts running allocations (Nomad's alloc restart): each acknowledged or
      // in-flight restart allows one more start of that allocation's task, and no more.
      const restarter = async () => {
        while (!dead) {
          try {
            const list = (await call(socket, 'GET', '/v1/allocations')).json<Alloc[]>().filter((a) => a.DesiredStatus === 'run' && a.ClientStatus === 'running');
            const a = list[Math.floor(rand() * list.length)];
            if (!a) {
              await new Promise((r) => setTimeout(r, 20));
              continue;
            }
            restarts.set(a.ID, (restarts.get(a.ID) ?? 0) + 1);
            const res = await call(socket, 'POST', `/v1/client/allocation/${a.ID}/restart`, {});
            // A 400 is a fair refusal: another client's update or stop got to the allocation first.
            if (res.status !== 200 && res.status !== 400 && !dead) throw new Error(`restart ${a.ID}: ${res.status} ${res.text}`);
            if (res.status === 200) restartsAcked++;
          } catch (err) {
            if (!dead) throw err;
            return;
          }
        }
      };
      const clients = [...[0, 1, 2, 3].map(client), restarter()];
      // The kill: at a random moment of the load, from a few milliseconds to most of a second.
      await new Promise((r) => setTimeout(r, 20 + rand() * 800));
      dead = true;
      process.kill(pid, 'SIGKILL');
      await agent.exited;
      await Promise.all(clients);
      for (const s of starts(startsFile)) taskPids.add(s.pid);
    }

    agent = await startAgentOn(dataDir);
    const acked = [...jobs.entries()].filter(([, t]) => t.acked !== undefined);
    expect(acked.length).toBeGreaterThan(0);
    for (const [id, truth] of jobs) {
      const res = await call(socket, 'GET', `/v1/job/${id}`);
      if (truth.acked === undefined) {
        // Never acknowledged: it may have landed (its reply was lost) or not.
        if (res.status === 200) expect(res.json().Meta.tag, id).toBe((truth.inFlight as { tag: string }).tag);
        else expect(res.status, id).toBe(404);
        continue;
      }
      expect(res.status, `${id} was acknowledged`).toBe(200);
      const job = res.json<{ Stop: boolean; Meta: { tag: string }; JobModifyIndex: number; TaskGroups: { Count: number }[] }>();
      const state = job.Stop ? 'stopped' : { tag: job.Meta.tag, count: job.TaskGroups[0]!.Count };
      expect([truth.acked, truth.inFlight], id).toContainEqual(state);
      expect(job.JobModifyIndex, id).toBeGreaterThanOrEqual(truth.ackedIndex);
    }

    // Healed: each running job has its instances running at its current version, a stopped job none.
    const jobList = (await call(socket, 'GET', '/v1/jobs')).json<{ ID: string; Stop: boolean }[]>();
    for (const j of jobList) {
      const job = (await call(socket, 'GET', `/v1/job/${j.ID}`)).json<{ Stop: boolean; Version: number; TaskGroups: { Count: number }[] }>();
      const want = job.Stop ? 0 : job.TaskGroups[0]!.Count;
      const done = (list: Alloc[]) => {
        const live = list.filter((a) => a.DesiredStatus === 'run');
        const active = list.filter((a) => a.ClientStatus === 'running' || a.ClientStatus === 'pending');
        return live.length === want && live.every((a) => a.ClientStatus === 'running' && a.JobVersion === job.Version) && active.length === want;
      };
      await within(60_000, waitForAllocs(socket, `/v1/job/${j.ID}/allocations`, done), async () => {
        const list = (await call(socket, 'GET', `/v1/job/${j.ID}/allocations`)).json<Alloc[]>();
        return `job ${j.ID} (stop ${job.Stop}, version ${job.Version}, count ${want}) never healed: ${JSON.stringify(list.map((a) => [a.ID, a.DesiredStatus, a.ClientStatus, a.JobVersion, Object.values(a.TaskStates).map((t) => t.Events.map((e) => e.Type))]))}`;
      });
    }

    // Stop everything; then every task process that ever started is gone, and none was started twice.
    for (const j of jobList) expect((await call(socket, 'DELETE', `/v1/job/${j.ID}?purge=true`)).status).toBe(200);
    await waitForAllocs(socket, '/v1/allocations', (list) => list.every((a) => a.ClientStatus !== 'running' && a.ClientStatus !== 'pending'));
    const all = starts(startsFile);
    for (const s of all) taskPids.add(s.pid);
    const perAlloc = new Map<string, number>();
    for (const s of all) perAlloc.set(s.alloc, (perAlloc.get(s.alloc) ?? 0) + 1);
    expect([...perAlloc].filter(([id, n]) => n > 1 + (restarts.get(id) ?? 0)), 'allocations whose task started more often than restarts explain').toEqual([]);
    const orphans = all.filter((s) => processRunning(s.pid));
    if (process.env.AGENT_CRASH_DEBUG) {
      for (const o of orphans) {
        const a = await call(socket, 'GET', `/v1/allocation/${o.alloc}`);
        console.log(o, a.status, a.status === 200 ? JSON.stringify({ d: a.json().DesiredStatus, c: a.json().ClientStatus, ev: Object.values(a.json().TaskStates as Record<string, { Events: { Type: string }[] }>).map((t) => t.Events.map((e) => e.Type)) }) : a.text);
      }
    }
    expect(orphans, 'task processes still running after their jobs were purged').toEqual([]);
    const inFlight = [...jobs.values()].filter((t) => t.inFlight !== undefined).length;
    console.log(`agent crash test: ${KILLS} kills (seed ${SEED}), ${jobs.size} jobs, ${acked.length} with acknowledged writes, ${inFlight} writes in flight at a kill, ${restartsAcked} restarts acknowledged, ${perAlloc.size} allocations none started more often than its restarts explain, 0 task processes left`);
    agent.child.kill('SIGTERM');
    const end = await agent.exited;
    expect(end.code, end.stderr).toBe(0);
    agent = undefined;
  });
});
