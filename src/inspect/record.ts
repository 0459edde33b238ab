/**
 * `recordInspection(path)`: writes the inspection stream as JSON lines (a header, then one protocol
 * message per line) for `allocrun replay` and the visualizer's replay mode.
 */
import { createWriteStream } from 'node:fs';
import { once } from 'node:events';
import type { InspectionEvent } from 'xstate';
import { createInspectionStream, type InspectionStream, type InspectionStreamOptions } from './inspection-stream.ts';
import { PROTOCOL_VERSION, type RecordingHeader } from './protocol.ts';

/** Record an existing stream (shared with `serveInspector`), or a new one built with these options. */
export interface RecordOptions extends InspectionStreamOptions {
  stream?: InspectionStream;
}

/** A running recording: pass `inspect` to the runner; `close` flushes and ends the file. */
export interface Recording {
  inspect: (ev: InspectionEvent) => void;
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
  const header: RecordingHeader = { kind: 'recording', version: PROTOCOL_VERSION, startedAt: Date.now() };
  const lines = [header, ...stream.snapshotForLateJoiner()].map((m) => JSON.stringify(m));
  file.write(lines.join('\n') + '\n');
  const unsubscribe = stream.subscribe((batch) => {
    if (failure === undefined) file.write(batch.map((m) => JSON.stringify(m)).join('\n') + '\n');
  });
  let closed: Promise<void> | undefined;
  return {
    inspect: stream.inspect,
    stream,
    close() {
      closed ??= (async () => {
        stream.flush();
        unsubscribe();
        file.end();
        if (!file.closed) await once(file, 'close');
        if (failure !== undefined) throw failure;
      })();
      return closed;
    },
  };
}
