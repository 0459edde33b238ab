/**
 * The agent's Killing save waits for the kill's exit where raw_exec's stop marker already records the KILL
 * (create-agent.ts, restored-kill.ts killSaveMayWait): one save per kill fewer. Real supervised processes, an
 * in-memory store whose records carry the time each was written (`updatedAt`). The deadline is a lower bound
 * (a timer never fires early), so these hold however loaded the box is.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { firstValueFrom, filter } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { createAgent, type AgentRecord } from '../../src/runtime/create-agent.ts';
import type { AllocSpec } from '../../src/jobspec/types.ts';
import { tempDir } from '../temp-dirs.ts';
import { MemoryStore } from './memory-store.ts';
import { until } from '../drivers/until.ts';

/** How long a Killing save waits at most (create-agent.ts KILL_SAVE_WAIT_MS). */
const WAIT_MS = 500;

/** A task running `script` after it touches `$READY` (so a KILL finds its TERM trap set). */
const job = (id: string, script: string, ready: string): AllocSpec => ({
  id, job: 'j', group: 'g', type: 'service',
  tasks: [{ name: 't', driver: 'raw_exec', config: { command: '/bin/sh', args: ['-c', script] }, env: { READY: ready }, killSignal: 'SIGTERM', killTimeout: 5_000 }],
});

/** The saves written from `since` on that show the kill begun while the task still runs. */
const killingWhileRunning = (saves: AgentRecord[], since: number) =>
  saves.filter((r) => r.updatedAt >= since && r.state.taskStates.t!.state === 'running' && r.state.taskStates.t!.events.some((e) => e.type === 'Killing'));

/** Runs `spec` under a fresh agent until its task runs, KILLs it, and returns the saves and the KILL's time. */
async function killed(id: string, script: string) {
  const store = new MemoryStore();
  const dataDir = tempDir('allocrun-killing-save-');
  const ready = join(dataDir, `${id}.ready`);
  const spec = job(id, script, ready);
  const agent = createAgent({ dataDir, store, builtinHooks: false });
  const runner = agent.run(spec);
  await until(() => existsSync(ready), 'the task ready (its TERM trap set)');
  // The start's saves settled, so every save from here on is the kill's.
  await firstValueFrom(agent.saved$(spec.id)!.pipe(filter((s) => s.state.taskStates.t!.state === 'running')));
  const sentAt = Date.now();
  runner.send({ type: 'KILL' });
  const final = await runner.done;
  await agent.shutdown();
  return { saves: store.saves, sentAt, final, last: store.records.get(spec.id)! };
}

describe('the Killing save of a raw_exec kill', () => {
  it('waits for the exit: no record shows the kill begun with the task running before the deadline', async () => {
    const { saves, sentAt, last } = await killed('quick', ': > "$READY"; exec sleep 60');
    for (const r of killingWhileRunning(saves, sentAt)) expect(r.updatedAt - sentAt, 'a Killing save written before its deadline').toBeGreaterThanOrEqual(WAIT_MS);
    const types = last.state.taskStates.t!.events.map((e) => e.type);
    expect(types).toContain('Killing');
    expect(types).toContain('Killed');
    expect(last.state.taskStates.t!.state).toBe('dead');
  }, 20_000);

  it('of a task slow to die is written at its deadline, before the exit', async () => {
    // The TERM trap takes 1.5 s: the kill is saved (and shown by the API) while the task still runs.
    const { saves, sentAt, final } = await killed('slow', 'trap "sleep 1.5; exit 0" TERM; : > "$READY"; sleep 60 & wait');
    const early = killingWhileRunning(saves, sentAt);
    expect(early.length, 'the kill saved while the task ran').toBeGreaterThanOrEqual(1);
    expect(early[0]!.updatedAt - sentAt).toBeGreaterThanOrEqual(WAIT_MS);
    expect(final.taskStates.t!.state).toBe('dead');
    expect(final.taskStates.t!.failed).toBe(false);
  }, 20_000);
});
