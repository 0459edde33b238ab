/**
 * `replay --check` on a recording made by the machines before the alloc's `running` became `steady` / `busy`
 * (its three regions were `running`'s own then): recorded by that tree's `recordUpdatedAndKilledRun` (a raw_exec
 * task updated in place, then killed). The replay's values are today's shape; the recording's are compared as
 * they upgrade (src/runtime/snapshot-upgrade.ts), so an old recording still checks, and a real change still shows.
 */
import { describe, expect, it } from 'vitest';
import { fileURLToPath } from 'node:url';
import { replayRecording } from '../../src/runtime/replay-driver.ts';
import { linesOf } from './replay-runs.ts';

const FIXTURE = fileURLToPath(new URL('./fixtures/recording-before-running-steady.jsonl', import.meta.url));

describe('a recording made while the alloc\'s running was parallel', () => {
  it('holds the old values (the regions at running\'s top)', async () => {
    const text = JSON.stringify(await linesOf(FIXTURE));
    expect(text).toContain('{"running":{"restarts":"idle","kill":"idle","updates":"idle"}}');
    expect(text).toContain('{"running":{"restarts":"idle","kill":"mains","updates":"idle"}}');
  });

  it('replays identical under today\'s machines', async () => {
    const result = await replayRecording(await linesOf(FIXTURE));
    expect(result.divergence).toBeUndefined();
    expect(result.summary.clientStatuses.kill1).toBe('complete');
    expect((result.summary.taskStates['kill1/api'] as { events: { type: string }[] }).events.map((e) => e.type)).toContain('Killed');
  });

  it('still reports a recorded alloc value that differs after the upgrade', async () => {
    const lines = await linesOf(FIXTURE);
    const text = JSON.stringify(lines).replace('{"running":{"restarts":"idle","kill":"mains","updates":"idle"}}', '{"running":{"restarts":"idle","kill":"leader","updates":"idle"}}');
    const result = await replayRecording(JSON.parse(text) as unknown[]);
    expect(result.divergence?.actor).toBe('kill1');
  });
});
