/**
 * `--inspect[=PORT]` and `--record FILE`: the seam between `run` and the visualizer (src/inspect/). Its
 * modules are loaded only when one of the flags is given, so `run` works without them; when both are
 * given the server and the recorder share one inspection stream.
 */
import { randomBytes } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { InspectionEvent } from 'xstate';
import type { Clock } from '../drivers/clock.ts';
import { CliError, UsageError } from './errors.ts';
import { importOptional } from './optional-module.ts';

/** What the inspector's page may send, routed to a runner (the shape of inspect/control.ts's). */
interface ControllableRunner {
  send(event: { type: 'KILL' } | { type: 'RESTART'; task?: string; failure?: boolean } | { type: 'SIGNAL'; task?: string; signal: string }): void;
  readonly actor: { getSnapshot(): { children: unknown } };
  logs?(task: string, opts: { follow?: boolean; tail?: number }): unknown;
}
type Stream = object;
/** An inspector feed to share (the agent's /ui, inspect/feed.ts): its stream and observer. */
type Feed = { stream: Stream; inspect: (ev: InspectionEvent) => void };
type ServeInspector = (opts: { port?: number; host?: string; stream?: Stream; control?: unknown; logs?: unknown; token?: string; stately?: boolean; feed?: Feed }) => Promise<{
  url: string;
  statelyUrl?: string;
  inspect: (ev: InspectionEvent) => void;
  stream: Stream;
  openPages(): number;
  whenNoPages(): Promise<void>;
  close(): Promise<void>;
}>;
type MachineClock = (clock: Clock) => Clock;
type RecordInspection = (path: string, opts?: { stream?: Stream }) => { inspect: (ev: InspectionEvent) => void; machineClock: MachineClock; close(): Promise<void> };
type AllocRunnerControl = (lookup: (allocId: string) => ControllableRunner | undefined) => unknown;

/** The file in a data dir that keeps the inspector's token across agent restarts (mode 0600). */
export const INSPECT_TOKEN_FILE = 'inspect-token';

/**
 * The inspector's token: `--inspect-token` when given, else the one kept in `<dataDir>/inspect-token`
 * (created, mode 0600, on first use), so a page left open reconnects to a restarted agent.
 */
export async function inspectorToken(given: string | undefined, dataDir: string, command: string): Promise<string> {
  if (given !== undefined) {
    if (given.length < 16) throw new UsageError(`${command}: --inspect-token must be at least 16 characters (it is all that guards the inspector's commands)`, command);
    return given;
  }
  const file = join(dataDir, INSPECT_TOKEN_FILE);
  try {
    const kept = (await readFile(file, 'utf8')).trim();
    if (kept.length >= 16) return kept;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw new CliError(`${command}: cannot read the inspector token ${file}: ${(err as Error).message}`, 'ErrInspectToken');
  }
  const token = randomBytes(18).toString('base64url');
  await writeFile(file, `${token}\n`, { mode: 0o600 });
  return token;
}

/** The file in a data dir that keeps the inspector's port, so a re-run (or a restarted agent) serves the same address. */
export const INSPECT_PORT_FILE = 'inspect-port';

/** The port kept in `file`, or undefined when there is none (or it is not a port). */
async function keptPort(file: string): Promise<number | undefined> {
  const text = (await readFile(file, 'utf8').catch(() => '')).trim();
  const port = Number(text);
  return /^\d+$/.test(text) && port > 0 && port <= 65535 ? port : undefined;
}

/** What `run` passes to its runners and closes at the end. */
export interface Inspection {
  /** The observer for createAllocRunner; undefined when neither flag was given. */
  inspect?: (ev: InspectionEvent) => void;
  /** The visualizer's address, when `--inspect` serves one. */
  url?: string;
  /** Where `@statelyai/inspect` receivers connect, with `--stately`. */
  statelyUrl?: string;
  /** With `--inspect`: pages connected now, and a promise that resolves once none is. */
  openPages?(): number;
  whenNoPages?(): Promise<void>;
  /** With `--record`: the runners' `machineClock`, so the recording's replay lines reproduce the machines' clock readings. */
  machineClock?: MachineClock;
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
  /** The page's token (see `inspectorToken`); default: a fresh one. */
  token?: string;
  /** Also serve the stream in `@statelyai/inspect`'s format (`--stately`). */
  stately?: boolean;
  lookup: (allocId: string) => ControllableRunner | undefined;
  /** The agent's UI feed: `--inspect` serves it too, `--record` records its stream, and runners report to it. */
  feed?: Feed;
  /** With a bare `--inspect`: the data dir whose `inspect-port` keeps the port from one run to the next. */
  dataDir?: string;
  /** Says what the operator should know (a kept port that was taken). */
  note?: (message: string) => void;
}): Promise<Inspection> {
  const closers: (() => Promise<void>)[] = [];
  let inspect: ((ev: InspectionEvent) => void) | undefined;
  let stream: Stream | undefined;
  let url: string | undefined;
  let statelyUrl: string | undefined;
  let machineClock: MachineClock | undefined;
  let pages: { openPages(): number; whenNoPages(): Promise<void> } | undefined;
  try {
    if (opts.inspect !== undefined) {
      const what = '--inspect (the visualizer, src/inspect/)';
      const serveInspector = await importOptional<ServeInspector>('../inspect/server.ts', 'serveInspector', what);
      const allocRunnerControl = await importOptional<AllocRunnerControl>('../inspect/control.ts', 'allocRunnerControl', what);
      const allocRunnerLogs = await importOptional<AllocRunnerControl>('../inspect/control.ts', 'allocRunnerLogs', what);
      const portFile = opts.inspect === null && opts.dataDir !== undefined ? join(opts.dataDir, INSPECT_PORT_FILE) : undefined;
      const kept = portFile === undefined ? undefined : await keptPort(portFile);
      const serve = (port: number) =>
        serveInspector({
          port,
          host: '127.0.0.1',
          ...(opts.feed ? { feed: opts.feed } : { control: allocRunnerControl(opts.lookup), logs: allocRunnerLogs(opts.lookup) }),
          ...(opts.token ? { token: opts.token } : {}),
          ...(opts.stately ? { stately: true } : {}),
        });
      let server: Awaited<ReturnType<ServeInspector>>;
      try {
        server = await serve(opts.inspect ?? kept ?? 0);
      } catch (err) {
        if (kept === undefined || (err as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw err;
        server = await serve(0);
        opts.note?.(`the inspector's port ${kept} (kept in ${portFile}) is taken by another program; serving on port ${new URL(server.url).port} instead, kept for next time (a page left open on the old port will not find this one)`);
      }
      // The next run on this data dir serves the same address: a page left open reconnects to it.
      if (portFile) await writeFile(portFile, `${new URL(server.url).port}\n`).catch((err: Error) => opts.note?.(`cannot keep the inspector's port in ${portFile}: ${err.message}`));
      closers.push(() => server.close());
      ({ inspect, stream, url, statelyUrl } = server);
      pages = server;
    }
    if (opts.record !== undefined) {
      const recordInspection = await importOptional<RecordInspection>('../inspect/record.ts', 'recordInspection', '--record (the inspection recorder, src/inspect/)');
      const recorder = recordInspection(opts.record, { stream: stream ?? opts.feed?.stream });
      closers.push(() => recorder.close());
      machineClock = recorder.machineClock;
      // A shared stream needs one observer; a recorder on its own brings its own.
      inspect ??= recorder.inspect;
    }
  } catch (err) {
    await Promise.allSettled(closers.map((c) => c()));
    throw err;
  }
  inspect ??= opts.feed?.inspect;
  return {
    inspect,
    url,
    statelyUrl,
    ...(machineClock && { machineClock }),
    ...(pages && { openPages: () => pages.openPages(), whenNoPages: () => pages.whenNoPages() }),
    close: async () => {
      // The recorder flushes first, then the server goes: the file gets every message the page got.
      for (const c of closers.reverse()) await c().catch(() => {});
    },
  };
}
