/**
 * The order between a runner's saves and the signals its kills send: what made a kill inside the runner (a
 * main task's death that stops its sidecar) is durable before the kill reaches a process. The agent saves a
 * runner's snapshots once per turn (create-agent.ts), so without this the sidecar could be signalled while
 * the save recording the main task's death still waited; an agent dying in between left a record that
 * says the main task runs and a sidecar already stopped, and the next agent stopped it again.
 */
import type { ActorSystem } from 'xstate';

type AnySystem = ActorSystem<any>;

const gates = new WeakMap<AnySystem, () => Promise<void> | undefined>();

/**
 * Makes the kills of the runner whose actors share `system` wait for what `cause()` returns: a promise that
 * resolves once what led to the kill is saved (or the save failed or stopped: a kill never waits for good),
 * or undefined when nothing needs saving first. A runner without a gate (no agent) signals at once.
 */
export function gateKills(system: AnySystem, cause: () => Promise<void> | undefined): void {
  gates.set(system, cause);
}

/**
 * What a kill waits for before its first signal: undefined when there is nothing to wait for, so such a kill
 * keeps its turn (a runner on a simulated clock relies on the order of its calls).
 */
export function beforeKill(system: AnySystem): Promise<void> | undefined {
  return gates.get(system)?.();
}
