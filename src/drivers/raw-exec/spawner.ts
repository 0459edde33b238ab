/**
 * Spawns raw_exec supervisors from a worker thread. `child_process.spawn` blocks its thread until the
 * child has exec'd (libuv waits for the exec on a pipe), and on the agent's thread that wait was the
 * largest part of a start: time in which no statechart could run. One worker thread per agent process
 * spawns instead and holds each supervisor's control pipes (fd 0 carries the go, fd 3 the pid report); the
 * agent keeps everything else (the intent and claim files, the output pipes, signals by pid). Threads
 * share the process, so a supervisor is still the agent's child and dies with nothing when the agent does.
 */
import { Worker } from 'node:worker_threads';

/** How a supervisor ended, as the `exit` event of its ChildProcess says; `lost` when nobody can tell any more. */
export interface ChildExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  lost?: string;
}

/** A child the worker spawned. */
export interface WorkerChild {
  readonly pid: number;
  /** The first line the child writes on fd 3, or undefined if fd 3 closed without one. */
  readonly reported: Promise<string | undefined>;
  readonly exited: Promise<ChildExit>;
  /** Set once the exit is known. */
  readonly exit: ChildExit | undefined;
  /** Writes `line` on the child's fd 0 and closes it. */
  go(line: string): void;
  /** Lets the agent exit while the child runs. */
  release(): void;
}

/** Why a spawn failed: the message and errno code of the spawn's error, and whether spawn threw at once. */
export class WorkerSpawnError extends Error {
  constructor(
    message: string,
    readonly code: string | undefined,
    /** Thrown by spawn itself (invalid arguments), not reported by the child's 'error' event. */
    readonly sync: boolean,
  ) {
    super(message);
    this.name = 'WorkerSpawnError';
  }
}

/** What the worker posts back, per child. */
type Report =
  | { id: number; type: 'spawned'; pid: number }
  | { id: number; type: 'failed'; message: string; code?: string; sync: boolean }
  | { id: number; type: 'reported'; line: string | null }
  | { id: number; type: 'exit'; code: number | null; signal: NodeJS.Signals | null };

/**
 * The worker, as plain CommonJS source: it runs unbundled and untransformed whatever loads the agent
 * (tsx, a bundle), so it must not be TypeScript nor refer to any helper of the module that starts it.
 */
const WORKER_SOURCE = `
const { parentPort } = require('node:worker_threads');
const { spawn } = require('node:child_process');
const children = new Map();
const post = (m) => parentPort.postMessage(m);
parentPort.on('message', (m) => {
  if (m.type === 'go') return children.get(m.id)?.stdin?.end(m.line);
  if (m.type === 'release') {
    const c = children.get(m.id);
    if (c) { c.unref(); for (const s of c.stdio) s?.unref?.(); }
    return;
  }
  let child;
  try {
    child = spawn(m.file, m.args, { cwd: m.cwd, env: m.env, detached: true, stdio: ['pipe', 'ignore', 'ignore', 'pipe'] });
  } catch (err) {
    return post({ id: m.id, type: 'failed', message: err.message, code: err.code, sync: true });
  }
  if (child.pid === undefined) {
    return child.once('error', (err) => post({ id: m.id, type: 'failed', message: err.message, code: err.code, sync: false }));
  }
  children.set(m.id, child);
  child.on('error', () => {});
  child.stdin.on('error', () => {});
  post({ id: m.id, type: 'spawned', pid: child.pid });
  const fd3 = child.stdio[3];
  let text = '';
  let told = false;
  const tell = (line) => { if (!told) { told = true; post({ id: m.id, type: 'reported', line }); } };
  fd3.on('data', (chunk) => {
    text += chunk.toString('utf8');
    const nl = text.indexOf('\\n');
    if (nl >= 0) tell(text.slice(0, nl));
  });
  fd3.on('error', () => {});
  fd3.once('close', () => tell(null));
  child.once('exit', (code, signal) => {
    tell(null);
    children.delete(m.id);
    post({ id: m.id, type: 'exit', code, signal });
  });
});
`;

interface Pending {
  spawned: (child: WorkerChild) => void;
  failed: (err: WorkerSpawnError) => void;
  reported: (line: string | undefined) => void;
  exited: (exit: ChildExit) => void;
  child?: { exit: ChildExit | undefined; held: boolean };
}

let worker: Worker | undefined;
let nextId = 0;
const pending = new Map<number, Pending>();
/** Children not yet exited nor released, plus spawns in flight: while any, the worker keeps the agent alive. */
let held = 0;

function hold(delta: number): void {
  held += delta;
  if (held > 0) worker?.ref();
  else worker?.unref();
}

function onReport(r: Report): void {
  const p = pending.get(r.id);
  if (!p) return;
  switch (r.type) {
    case 'spawned':
      return p.spawned(childOf(r.id, r.pid, p));
    case 'failed':
      pending.delete(r.id);
      hold(-1);
      return p.failed(new WorkerSpawnError(r.message, r.code, r.sync));
    case 'reported':
      return p.reported(r.line ?? undefined);
    case 'exit': {
      pending.delete(r.id);
      const state = p.child!;
      state.exit = { code: r.code, signal: r.signal };
      if (state.held) {
        state.held = false;
        hold(-1);
      }
      return p.exited(state.exit);
    }
  }
}

function childOf(id: number, pid: number, p: Pending): WorkerChild {
  const state = { exit: undefined as ChildExit | undefined, held: true };
  p.child = state;
  const reported = new Promise<string | undefined>((resolve) => (p.reported = resolve));
  const exited = new Promise<ChildExit>((resolve) => (p.exited = resolve));
  return {
    pid,
    reported,
    exited,
    get exit() {
      return state.exit;
    },
    go: (line) => worker?.postMessage({ type: 'go', id, line }),
    release: () => {
      if (!state.held) return;
      state.held = false;
      hold(-1);
      worker?.postMessage({ type: 'release', id });
    },
  };
}

function theWorker(): Worker {
  if (!worker) {
    worker = new Worker(WORKER_SOURCE, { eval: true });
    worker.on('message', onReport);
    // A worker that dies (it never should: it catches what spawn throws) takes its children's control
    // pipes and reaping with it: spawns in flight fail, live children are reported lost, later spawns get
    // a new worker.
    worker.on('error', () => undefined);
    worker.on('exit', () => {
      worker = undefined;
      held = 0;
      for (const [id, p] of pending) {
        pending.delete(id);
        if (!p.child) {
          p.failed(new WorkerSpawnError('the spawner thread exited', undefined, false));
          continue;
        }
        p.reported(undefined);
        p.child.exit = { code: null, signal: null, lost: 'the spawner thread that held the supervisor exited, so its exit cannot be seen' };
        p.exited(p.child.exit);
      }
    });
    worker.unref();
  }
  return worker;
}

/**
 * Starts the spawner thread ahead of the first spawn (it takes tens of milliseconds to come up, and a
 * few megabytes), so that spawn does not wait for it. Idempotent.
 */
export function warmSpawner(): void {
  theWorker();
}

/**
 * Spawns `file` with `args` in its own session (detached), stdin and fd 3 as pipes to the worker, stdout
 * and stderr ignored; resolves once it is spawned.
 */
export function spawnInWorker(file: string, args: readonly string[], opts: { cwd: string; env: Record<string, string> }): Promise<WorkerChild> {
  const w = theWorker();
  const id = nextId++;
  return new Promise<WorkerChild>((spawned, failed) => {
    pending.set(id, { spawned, failed, reported: () => undefined, exited: () => undefined });
    hold(1);
    w.postMessage({ type: 'spawn', id, file, args, cwd: opts.cwd, env: opts.env });
  });
}
