// The hook loop's stale-answer guard (machines/hook-phase.ts): only the current hook's done or error moves
// a phase on, so once a phase has run every hook no child's answer counts as the current one.
import { describe, expect, it } from 'vitest';
import { hookLoopGuards, type HookLoopContext } from '../../machines/hook-phase.ts';
import { hookActorId } from '../../machines/hook-calls.ts';

describe('hook loop: isCurrentHook', () => {
  const phase = { phase: 'poststart' };

  it("takes the current hook's done as its answer", () => {
    const context: HookLoopContext = { hooks: { poststart: ['logmon', 'stats'] }, cursor: { poststart: 1 } };
    const event = { type: `xstate.done.actor.${hookActorId('poststart', 'stats')}` };
    expect(hookLoopGuards.isCurrentHook({ context, event }, phase)).toBe(true);
  });

  it('takes no answer as the current hook once every hook of the phase has run', () => {
    const context: HookLoopContext = { hooks: { poststart: ['logmon', 'stats'] }, cursor: { poststart: 2 } };
    for (const type of ['xstate.done.actor.poststart:stats', 'xstate.error.actor.poststart:logmon']) {
      expect(hookLoopGuards.isCurrentHook({ context, event: { type } }, phase)).toBe(false);
    }
  });
});
