/**
 * The order between a runner's saves and the signals its kills send: what made a kill (a main task's death
 * that stops its sidecar, a Killing event) is durable before the kill reaches a process. The agent saves a
 * runner's snapshots once per turn (create-agent.ts), so without this the sidecar could be signalled while
 * the save recording the main task's death still waited; an agent dying in between left a record that
 * says the main task runs and a sidecar already stopped, and the next agent stopped it again.
 */
import type { ActorSystem } from 'xstate';

type AnySystem = ActorSystem<any>;

const gates = new WeakMap<AnySystem, () => Promise<void>>();

/**
 * Makes the kills of the runner whose actors share `system` wait for `durable()`, which resolves once
 * everything the runner did up to the call is saved (or the save failed or stopped: a kill never waits for
 * good). A runner without one (no agent, nothing persisted) signals at once.
 */
export function gateKills(system: AnySystem, durable: () => Promise<void>): void {
  gates.set(system, durable);
}

/**
 * What a kill waits for before its first signal: undefined when the runner has no gate, so a kill of a
 * runner nothing persists keeps its turn (a runner on a simulated clock relies on the order of its calls).
 */
export function beforeKill(system: AnySystem): Promise<void> | undefined {
  return gates.get(system)?.();
}
