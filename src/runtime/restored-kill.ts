/**
 * A KILL the dead agent took but never saved. An embedder's KILL (no API to commit it first) reaches the disk
 * only with the runner's next save, the Killing save, which lands after the kill's stop signals (each
 * preceded by the driver's stop marker, raw_exec's `<prefix>.stop`). An agent that died in between left a
 * record saying "running", and a restore from it alone would take the signalled task's exit for the end of
 * one task (its marker says kill) while the tasks not yet signalled run on: the kill half done, for good.
 *
 * So a restore asks each live task's driver whether a stop had begun (the marker of the handle's attempt),
 * and a kill marker that nothing in the restored runner explains is that KILL, to be sent again. What does
 * explain one: the allocation already killing (a KILL or an API stop saved, or the reducer's kill re-derived
 * from a death on disk: a failed task's siblings, a leader's, the kill gate saves that death before any
 * signal), the task released by its main tasks' deaths (likewise on disk first), or the task's own stop in
 * its record (a kill, or a restart, whose force kill marks "kill" too). A restart's marker says "restart".
 */
import type { TaskRunnerActor } from '../../machines/task-runner.ts';
import type { Driver, DriverHandle } from '../drivers/controller.ts';
import type { AllocRunner } from './create-alloc-runner.ts';

/** The first task of a just-restored runner whose kill marker nothing saved explains; undefined if none. */
export function unsavedKill(runner: AllocRunner, drivers: Readonly<Record<string, Driver>>): string | undefined {
  const snap = runner.actor.getSnapshot();
  if (snap.status !== 'active' || snap.context.killing) return undefined;
  for (const task of snap.context.alloc.tasks) {
    if (snap.context.taskFlags.released?.[task.name]) continue;
    const tr = (snap.children[task.name] as TaskRunnerActor | undefined)?.getSnapshot();
    if (!tr || tr.status !== 'active') continue;
    const { killRequested, run, taskState } = tr.context;
    if (killRequested || run.stopReason !== undefined || taskState.state === 'dead' || !run.handle) continue;
    if (drivers[task.driver]?.stopBegun?.(run.handle as unknown as DriverHandle) === 'kill') return task.name;
  }
  return undefined;
}
