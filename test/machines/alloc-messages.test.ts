/**
 * What the alloc runner sends its task runners, counted: gates are level-triggered and a release KILL is
 * idempotent, so a repeat changes no state, but every message costs a macrostep in the task runner and a
 * snapshot back to the alloc. Each gate change and each release is sent once, and no gate is closed on a
 * task that is dead.
 */
import { describe, expect, it } from 'vitest';
import type { InspectionEvent } from 'xstate';
import { createAllocRunner } from '../../src/runtime/create-alloc-runner.ts';
import type { AllocSpec, TaskSpec } from '../../src/jobspec/types.ts';
import { SimulatedClock } from '../../src/testing/simulated-clock.ts';

const task = (name: string, extra: Partial<TaskSpec> = {}): TaskSpec => ({ name, driver: 'mock', config: { run_for: '1s' }, ...extra });

/** Runs `spec` to its end on a simulated clock and lists the GATE and KILL events each task runner got. */
async function messagesOf(spec: AllocSpec): Promise<string[]> {
  const clock = new SimulatedClock(0);
  const seen: string[] = [];
  const inspect = (e: InspectionEvent) => {
    const id = (e.actorRef as { id?: string }).id;
    if (e.type !== '@xstate.event' || id === spec.id) return;
    const ev = e.event as { type: string; open?: boolean };
    if (ev.type === 'GATE') seen.push(`${id} GATE ${ev.open ? 'open' : 'closed'}`);
    if (ev.type === 'KILL') seen.push(`${id} KILL`);
  };
  const runner = createAllocRunner(spec, { clock, builtinHooks: false, inspect }).start();
  for (let i = 0; i < 10 && runner.getState().clientStatus !== 'complete'; i++) await clock.advance(1_000);
  expect((await runner.done).clientStatus).toBe('complete');
  return seen;
}

describe('alloc runner → task runners: each message once', () => {
  it('opens only the gates of the first stage when the tasks may start (every runner starts behind a closed one)', async () => {
    const seen = await messagesOf({ id: 'a1', job: 'j', group: 'g', type: 'batch', tasks: [task('init', { lifecycle: { hook: 'prestart' } }), task('main')] });
    // Until init is done, the only message is its gate opening: main's stays as it started, closed.
    expect(seen.slice(0, seen.indexOf('main GATE open'))).toEqual(['init GATE open']);
  });

  it('sends each gate change and each release KILL once over a whole prestart → main → poststop lifecycle', async () => {
    const seen = await messagesOf({
      id: 'a1', job: 'j', group: 'g', type: 'batch',
      tasks: [task('init', { lifecycle: { hook: 'prestart' } }), task('main'), task('cleanup', { lifecycle: { hook: 'poststop' } })],
    });
    expect(seen).toEqual([
      'init GATE open',
      // init is done: main's stage opens. init's gate is not closed: a dead task passes it again only
      // through a restart of the whole alloc, which closes every gate first.
      'main GATE open',
      // Nothing is live: the parked dead tasks are released to run their stop hooks, once each.
      'init KILL',
      'main KILL',
      'cleanup GATE open',
    ]);
  });
});
