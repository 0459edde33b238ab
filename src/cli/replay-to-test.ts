/**
 * `allocrun replay --to-test FILE`: turns a recording into a vitest regression test. The test holds the
 * recorded inputs (not the steps), re-drives them through `allocrun/testing`'s `replayRecording`, and
 * expects what the recording shows: every actor's sequence of `event → state`, the last TaskState of each
 * task and the client status of each allocation.
 */
import { basename } from 'node:path';
import { encodeReplayValue, expandSteps, summarizeSteps, type ReplayLine, type ReplayStepLine } from '../inspect/replay-format.ts';

/** Where the generated test imports the replay from: the package's testing entry (aliased to the source inside this repo). */
export const TESTING_IMPORT = 'allocrun/testing';

/** The text of a vitest file re-driving `lines` (a recording's parsed lines) and expecting its recorded outcome. */
export function incidentTest(file: string, lines: readonly unknown[]): string {
  const header = lines[0] as { startedAt?: number };
  const replay = expandSteps(lines).filter((l): l is ReplayLine => /^replay-(root|input|step)$/.test((l as { kind?: string }).kind ?? ''));
  const steps = replay.filter((l): l is ReplayStepLine => l.kind === 'replay-step');
  const inputs = replay.filter((l) => l.kind !== 'replay-step');
  const expected = summarizeSteps(steps);
  const name = basename(file);
  const recorded = typeof header.startedAt === 'number' ? new Date(header.startedAt).toISOString() : 'at an unknown time';
  const inputCount = inputs.filter((l) => l.kind === 'replay-input').length;
  const json = (v: unknown) => JSON.stringify(v, encodeReplayValue, 2);
  return `/**
 * Incident ${name}, recorded ${recorded}, made a regression test by \`allocrun replay --to-test\`.
 * Re-drives the ${inputCount} recorded inputs (commands, driver and hook results, sleeps) through the
 * machines on the replay clock, and expects the recorded steps of every actor and the recorded end state.
 */
import { expect, it } from 'vitest';
import { replayRecording } from '${TESTING_IMPORT}';

/** The recording's roots and inputs, in order. */
const inputs: unknown[] = [
${inputs.map((l) => `  ${JSON.stringify(l, encodeReplayValue)},`).join('\n')}
];

/** Every actor's steps as \`event → state\`, as recorded. */
const transitions: Record<string, string[]> = ${json(expected.transitions)};

/** The last recorded TaskState of each task. */
const taskStates: Record<string, unknown> = ${json(expected.taskStates)};

/** The last recorded client status of each allocation. */
const clientStatuses: Record<string, string> = ${json(expected.clientStatuses)};

it(${JSON.stringify(`re-drives incident ${name} to its recorded steps and end state`)}, async () => {
  const { summary, divergence } = await replayRecording(inputs);
  expect(summary.transitions).toEqual(transitions);
  expect(summary.taskStates).toEqual(taskStates);
  expect(summary.clientStatuses).toEqual(clientStatuses);
  expect(divergence).toBeUndefined();
});
`;
}
