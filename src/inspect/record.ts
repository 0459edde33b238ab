/**
 * `recordInspection(path)`: writes the inspection stream as JSON lines (a header, then one protocol
 * message per line) for `allocrun replay` and the visualizer's replay mode, and with it the replay lines
 * (replay-format.ts): every input that crossed into the machines and every step they took, so
 * `allocrun replay --check` can re-drive the machines with them.
 */
import { createWriteStream } from 'node:fs';
import { once } from 'node:events';
import type { InspectionEvent } from 'xstate';
import { createInputRecorder, type ReplayClockLike } from './input-recorder.ts';
import { createInspectionStream, type InspectionStream, type InspectionStreamOptions } from './inspection-stream.ts';
import { PROTOCOL_VERSION, type RecordingHeader } from './protocol.ts';
import { encodeReplayValue, REPLAY_FORMAT_VERSION, stepCompactor, type ReplayLine } from './replay-format.ts';

/** Record an existing stream (shared with `serveInspector`), or a new one built with these options. */
export interface RecordOptions extends InspectionStreamOptions {
  stream?: InspectionStream;
}

/** A running recording: pass `inspect` to the runner; `close` flushes and ends the file. */
export interface Recording {
  inspect: (ev: InspectionEvent) => void;
  /**
   * Pass as createAllocRunner's `machineClock`: the machines' clock readings while an input is processed
   * then read that input's recorded time, which `replay --check` needs to reproduce them exactly.
   */
  machineClock: (clock: ReplayClockLike) => ReplayClockLike;
  readonly stream: InspectionStream;
  close(): Promise<void>;
}

/** Starts recording to `path` (truncated). Messages already in the stream's picture are written first. */
export function recordInspection(path: string, opts: RecordOptions = {}): Recording {
  const stream = opts.stream ?? createInspectionStream(opts);
  // The stream carries task env and state: readable by the user only, like the state files.
  const file = createWriteStream(path, { flags: 'w', mode: 0o600 });
  let failure: unknown;
  file.on('error', (err) => (failure ??= err));
  const header: RecordingHeader = { kind: 'recording', version: PROTOCOL_VERSION, startedAt: Date.now(), replay: REPLAY_FORMAT_VERSION };
  const lines = [header, ...stream.snapshotForLateJoiner()].map((m) => JSON.stringify(m));
  file.write(lines.join('\n') + '\n');
  const unsubscribe = stream.subscribe((batch) => {
    if (failure === undefined) file.write(batch.map((m) => JSON.stringify(m)).join('\n') + '\n');
  });
  // Replay lines are made as the inputs happen and serialised in batches, off the send path: what they
  // hold (events, snapshots' values and TaskStates) is never mutated afterwards.
  let pending: ReplayLine[] = [];
  const compact = stepCompactor();
  const writeReplayLines = () => {
    const batch = pending;
    pending = [];
    if (batch.length > 0 && failure === undefined) file.write(batch.map((l) => JSON.stringify(compact(l), encodeReplayValue)).join('\n') + '\n');
  };
  const recorder = createInputRecorder((line) => {
    if (pending.push(line) === 1) setImmediate(writeReplayLines);
  });
  const unsubscribeRaw = stream.subscribeRaw(recorder.inspect);
  let closed: Promise<void> | undefined;
  return {
    inspect: stream.inspect,
    machineClock: (clock) => recorder.machineClock(clock),
    stream,
    close() {
      closed ??= (async () => {
        stream.flush();
        unsubscribe();
        unsubscribeRaw();
        writeReplayLines();
        file.end();
        if (!file.closed) await once(file, 'close');
        if (failure !== undefined) throw failure;
      })();
      return closed;
    },
  };
}
