/**
 * The three path tests every model gets: the shortest path to each state, one path per transition (all of
 * them, asserted), and every simple path, each replayed on a fresh real runner. Reports how many paths and
 * transitions were covered.
 */
import { afterAll, describe, expect, it } from 'vitest';
import type { AnyStateMachine, EventObject, SnapshotFrom } from 'xstate';
import {
  allTransitions, coveredTransitions, replayPath, shortestPaths, simplePaths, transitionPaths,
  type ModelPath, type PathOptions, type PathWorld,
} from './paths.ts';

export interface PathSuite<E extends EventObject, W extends PathWorld<E>> {
  /** The runner's name in test titles and the printed figures. */
  name: string;
  machine: AnyStateMachine;
  opts: PathOptions<E>;
  /** A fresh real runner, started and settled. */
  world: () => Promise<W>;
  /** What the real runner must show in a model state. */
  expectationOf: (snap: SnapshotFrom<AnyStateMachine>) => unknown;
  /** What the transition test says it checks beyond the states (test title), and that check per path. */
  afterTransitionPath: { title: string; check: (world: W, trail: string) => void };
}

/** Defines the path tests of one model; prints `<name> model: N shortest paths; ...` once they ran. */
export function describePathSuite<E extends EventObject, W extends PathWorld<E>>(s: PathSuite<E, W>): void {
  const replay = async (path: ModelPath<E>) =>
    replayPath(s.machine, path, await s.world(), s.expectationOf, (actual, expected, trail) => expect(actual, trail).toEqual(expected));
  const trailOf = (p: ModelPath<E>) => p.steps.map((step) => step.event.type).join(' → ');
  const figures: string[] = [];
  afterAll(() => console.log(`${s.name} model: ${figures.join('; ')}`));

  describe(`${s.name}: every path of the model, replayed on the real runner`, () => {
    const all = allTransitions(s.machine, s.opts);

    it('reaches every model state by its shortest path, showing what the model predicts at every step', async () => {
      const paths = shortestPaths(s.machine, s.opts);
      for (const p of paths) await replay(p);
      figures.push(`${paths.length} shortest paths`);
    });

    it(`takes every transition of the model once; ${s.afterTransitionPath.title}`, async () => {
      const paths = transitionPaths(s.machine, s.opts);
      for (const p of paths) s.afterTransitionPath.check(await replay(p), trailOf(p));
      const covered = coveredTransitions(paths, s.opts);
      expect([...all].filter((t) => !covered.has(t))).toEqual([]);
      figures.push(`${paths.length} transition paths covering ${covered.size}/${all.size} transitions`);
    });

    it('follows every simple path of the model', async () => {
      const paths = simplePaths(s.machine, s.opts);
      for (const p of paths) await replay(p);
      figures.push(`${paths.length} simple paths covering ${coveredTransitions(paths, s.opts).size}/${all.size} transitions`);
      expect(paths.length).toBeGreaterThan(0);
    });
  });
}
