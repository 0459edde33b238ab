/**
 * `allocrun replay --check FILE`: reads a recording, re-drives its inputs through today's machines
 * (runtime/replay-driver.ts) and says whether they took the recorded steps, or where they first did not,
 * with the machine source the differing step went through.
 */
import { existsSync, readFileSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { recordingProblem } from '../inspect/protocol.ts';
import { replayFormatProblem, reviveReplayValue, type ReplayInputLine, type ReplayRootLine, type ReplayStepLine } from '../inspect/replay-format.ts';
import { ReplayInputError, replayRecording, type ReplayDivergence, type ReplayOptions, type ReplayResult, type TakenTransition } from '../runtime/replay-driver.ts';
import { CliError } from './errors.ts';

/** A recording that cannot be checked by this allocrun (missing, malformed, another format version): exit 2. */
export class ReplayFileError extends CliError {
  constructor(message: string, code = 'ErrReplayFile') {
    super(message, code, 2);
    this.name = 'ReplayFileError';
  }
}

/** A recording's parsed lines, its header first; refuses a file this allocrun cannot check, naming why. */
export async function readRecording(file: string): Promise<unknown[]> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new ReplayFileError(`replay: cannot read ${file}: ${code === 'ENOENT' ? "no such file (record one with 'allocrun run <jobfile> --record FILE')" : (err as Error).message}`);
  }
  const lines: unknown[] = [];
  const raw = text.split('\n');
  for (let i = 0; i < raw.length; i++) {
    if (raw[i]!.trim() === '') continue;
    try {
      lines.push(JSON.parse(raw[i]!, reviveReplayValue));
    } catch (err) {
      // A recording cut short (the recorder killed mid-write) has a partial last line: the rest is still checkable.
      if (i >= raw.length - 2) break;
      throw new ReplayFileError(`replay: ${file}:${i + 1}: not a JSON line (${(err as Error).message})`);
    }
  }
  const protocol = recordingProblem(lines[0]);
  const format = protocol ?? replayFormatProblem(lines[0]);
  if (format) throw new ReplayFileError(`replay: cannot check ${file}: ${format}`, 'ErrReplayVersion');
  return lines;
}

/** `readRecording`, refusing a recording that holds no input to re-drive. */
export async function readRecordingWithInputs(file: string): Promise<unknown[]> {
  const lines = await readRecording(file);
  if (!lines.some((l) => (l as ReplayInputLine).kind === 'replay-input')) {
    throw new ReplayFileError(`replay: ${file} holds no replay inputs: nothing to re-drive (was the recording closed before its runners started?)`, 'ErrReplayEmpty');
  }
  return lines;
}

/** `replayRecording(lines)`, a recording it cannot act on refused as a ReplayFileError (exit 2). */
export async function replayOrRefuse(file: string, lines: unknown[], opts: ReplayOptions = {}): Promise<ReplayResult> {
  try {
    return await replayRecording(lines, opts);
  } catch (err) {
    if (err instanceof ReplayInputError) throw new ReplayFileError(`replay: cannot re-drive ${file}: ${err.message}`);
    throw err;
  }
}

/** Where each machine is written, by machine id (the first segment of its state node ids). */
const MACHINE_FILES: Record<string, string> = { task: 'machines/task-runner.ts', alloc: 'machines/alloc-runner.ts' };

/** The package root's file `rel`: beside src/ in the repo and the package (dist/src/cli has it two levels further up). */
function packageFile(rel: string): string | undefined {
  for (const up of ['../../', '../../../']) {
    const path = fileURLToPath(new URL(up + rel, import.meta.url));
    if (existsSync(path)) return path;
  }
  return undefined;
}

/**
 * `machines/task-runner.ts:313` for the state node `task.exited.deciding`: the line where its key opens,
 * found by walking the keys of its path down the machine's file. A state built by a helper (a hook loop's
 * `hooks.next`) has no key of its own there: its nearest written ancestor's line is given. Undefined when
 * the file or the first key is not found.
 */
export function stateNodeLocation(stateNodeId: string): string | undefined {
  const [machine, ...keys] = stateNodeId.split('.');
  const rel = MACHINE_FILES[machine!];
  const path = rel && packageFile(rel);
  if (!path) return undefined;
  const lines = readFileSync(path, 'utf8').split('\n');
  let at = lines.findIndex((l) => /createMachine\(|\.createMachine\(/.test(l));
  if (at < 0) at = 0;
  let written = 0;
  for (const key of keys) {
    const opens = new RegExp(`^\\s*['"]?${key.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}['"]?\\s*:\\s*\\{`);
    const found = lines.findIndex((l, i) => i > at && opens.test(l));
    if (found < 0) break;
    at = found;
    written++;
  }
  if (written === 0) return undefined;
  return `${rel}:${at + 1}${written < keys.length ? ` (${keys.slice(0, written).join('.')})` : ''}`;
}

/** The transition that decided a step (the last one with a target), as one line with its source location. */
export function describeTaken(took: readonly TakenTransition[] | undefined): string | undefined {
  const deciding = [...(took ?? [])].reverse().find((t) => t.targets.length > 0) ?? took?.at(-1);
  if (!deciding) return undefined;
  const parts = [deciding.guard && `guard ${deciding.guard}`, deciding.actions.length > 0 && `actions ${deciding.actions.join(', ')}`].filter(Boolean);
  const where = stateNodeLocation(deciding.source);
  return `${deciding.source} → ${deciding.targets.join(', ') || '(stays)'}${parts.length > 0 ? ` (${parts.join('; ')})` : ''}${where ? ` at ${where}` : ''}`;
}

/** The divergence as the lines `--check` prints. */
export function divergenceReport(file: string, d: ReplayDivergence): string {
  const input = d.input ? `, after input #${d.input.index} (${d.input.input} ${d.input.type} to ${d.input.to}, clock ${new Date(d.at).toISOString()})` : '';
  const out = [`replay check: ${file} diverges at step ${d.step} (${d.actor}'s step ${d.actorStep})${input}:`, `  ${d.message}`];
  if (d.recorded !== undefined) out.push(`  recorded: ${d.recorded}`);
  if (d.now !== undefined) out.push(`  now:      ${d.now}`);
  if (d.location) out.push(`  machine:  ${d.location}`);
  return out.join('\n') + '\n';
}

/** The outcome of a check: the replay's result and the recording it was checked against. */
export interface CheckOutcome {
  lines: unknown[];
  result: ReplayResult;
}

/** Checks `file`; a divergence gets its `location` filled in from the machines' source. */
export async function checkRecording(file: string, opts: ReplayOptions = {}): Promise<CheckOutcome> {
  const lines = await readRecordingWithInputs(file);
  const result = await replayOrRefuse(file, lines, opts);
  if (result.divergence) {
    const location = describeTaken(result.divergence.took);
    if (location) result.divergence.location = location;
    const unpinned = lines.some((l) => (l as ReplayRootLine).kind === 'replay-root' && (l as ReplayRootLine).pinnedClock === false);
    if (unpinned && /\btime\b|At\b/.test(`${result.divergence.recorded} ${result.divergence.now}`)) {
      result.divergence.message += ` (the recorded runners were not given the recording's machineClock, so their clock readings may differ from the replay's by a tick: pass it to createAllocRunner)`;
    }
  }
  return { lines, result };
}

/** The line `--check` prints when the replay took every recorded step. */
export function identicalReport(file: string, outcome: CheckOutcome): string {
  const steps = outcome.lines.filter((l) => (l as ReplayStepLine).kind === 'replay-step') as ReplayStepLine[];
  const actors = new Set(steps.map((s) => s.to.join('/'))).size;
  return `replay check: ${file} is identical: ${outcome.result.inputsFed} inputs re-driven through today's machines took the ${steps.length} recorded steps of ${actors} actors\n`;
}

/**
 * Writes into `dir` the recording `file` with the divergence appended as a last line (`divergence` kind):
 * the file the visualizer is served for `--check --open`, which marks it on the timeline. Returns its path.
 */
export async function writeCheckedCopy(file: string, divergence: ReplayDivergence | undefined, dir: string): Promise<string> {
  const checked = join(dir, basename(file));
  const text = await readFile(file, 'utf8');
  const body = text === '' || text.endsWith('\n') ? text : `${text}\n`;
  await writeFile(checked, body + (divergence ? `${JSON.stringify(divergence)}\n` : ''), { mode: 0o600 });
  return checked;
}
