/**
 * `--inspect[=PORT]` and `--record FILE`: the seam between `run` and the visualizer (src/inspect/). Its
 * modules are loaded only when one of the flags is given, so `run` works without them; when both are
 * given the server and the recorder share one inspection stream.
 */
import type { InspectionEvent } from 'xstate';
import { UsageError } from './errors.ts';
import { importOptional } from './optional-module.ts';

/** What the inspector's page may send, routed to a runner (the shape of inspect/control.ts's). */
interface ControllableRunner {
  send(event: { type: 'KILL' } | { type: 'RESTART'; task?: string; failure?: boolean } | { type: 'SIGNAL'; task?: string; signal: string }): void;
  readonly actor: { getSnapshot(): { children: unknown } };
}
type Stream = object;
type ServeInspector = (opts: { port?: number; host?: string; stream?: Stream; control?: unknown }) => Promise<{ url: string; inspect: (ev: InspectionEvent) => void; stream: Stream; close(): Promise<void> }>;
type RecordInspection = (path: string, opts?: { stream?: Stream }) => { inspect: (ev: InspectionEvent) => void; close(): Promise<void> };
type AllocRunnerControl = (lookup: (allocId: string) => ControllableRunner | undefined) => unknown;

/** What `run` passes to its runners and closes at the end. */
export interface Inspection {
  /** The observer for createAllocRunner; undefined when neither flag was given. */
  inspect?: (ev: InspectionEvent) => void;
  /** The visualizer's address, when `--inspect` serves one. */
  url?: string;
  close(): Promise<void>;
}

/** Reads a port flag: an integer 0–65535 (0 = any free port). */
export function parsePort(command: string, flag: string, value: string): number {
  const port = Number(value);
  if (!/^\d+$/.test(value) || port > 65535) throw new UsageError(`${command}: ${flag} must be a port number 0-65535 (got ${JSON.stringify(value)})`, command);
  return port;
}

/**
 * Starts the visualizer server (`inspect`: a port, or null for any free one) and/or the recorder
 * (`record`: a file). `lookup` finds a runner by alloc id for the page's KILL/RESTART/SIGNAL buttons.
 */
export async function openInspection(opts: {
  inspect?: number | null;
  record?: string;
  lookup: (allocId: string) => ControllableRunner | undefined;
}): Promise<Inspection> {
  const closers: (() => Promise<void>)[] = [];
  let inspect: ((ev: InspectionEvent) => void) | undefined;
  let stream: Stream | undefined;
  let url: string | undefined;
  try {
    if (opts.inspect !== undefined) {
      const what = '--inspect (the visualizer, src/inspect/)';
      const serveInspector = await importOptional<ServeInspector>('../inspect/server.ts', 'serveInspector', what);
      const allocRunnerControl = await importOptional<AllocRunnerControl>('../inspect/control.ts', 'allocRunnerControl', what);
      const server = await serveInspector({ port: opts.inspect ?? 0, host: '127.0.0.1', control: allocRunnerControl(opts.lookup) });
      closers.push(() => server.close());
      ({ inspect, stream, url } = server);
    }
    if (opts.record !== undefined) {
      const recordInspection = await importOptional<RecordInspection>('../inspect/record.ts', 'recordInspection', '--record (the inspection recorder, src/inspect/)');
      const recorder = recordInspection(opts.record, { stream });
      closers.push(() => recorder.close());
      // A shared stream needs one observer; a recorder on its own brings its own.
      inspect ??= recorder.inspect;
    }
  } catch (err) {
    await Promise.allSettled(closers.map((c) => c()));
    throw err;
  }
  return {
    inspect,
    url,
    close: async () => {
      // The recorder flushes first, then the server goes: the file gets every message the page got.
      for (const c of closers.reverse()) await c().catch(() => {});
    },
  };
}
