/**
 * Spawns raw_exec supervisors from a small helper process, one per agent process. On Linux a spawn forks
 * the process that calls it (libuv uses fork, not vfork): the kernel copies the caller's page tables and
 * write-protects its memory, so the cost grows with the caller's heap, and while a thread of the agent
 * forks, the agent's other threads stall on its memory. A helper of a few megabytes of heap forks cheaply
 * and outside the agent (it replaced a spawner thread inside the agent; bench/p1-p2-start-kill.ts). The
 * helper holds each supervisor's control pipes (fd 0 carries the go, fd 3 the pid report) and sees its
 * exit; the agent keeps everything else (the intent and claim files, the output pipes, signals by pid).
 * The helper exits when its channel to the agent closes, so an agent that dies takes the control pipes
 * with it, as it always did: a closed go pipe is a go, and the workloads run on.
 */
import { spawn, type ChildProcess } from 'node:child_process';

/** How a supervisor ended, as the `exit` event of its ChildProcess says; `lost` when nobody can tell any more. */
export interface ChildExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  lost?: string;
}

/** A child the helper spawned. */
export interface SpawnedChild {
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
export class SpawnerError extends Error {
  constructor(
    message: string,
    readonly code: string | undefined,
    /** Thrown by spawn itself (invalid arguments), not reported by the child's 'error' event. */
    readonly sync: boolean,
  ) {
    super(message);
    this.name = 'SpawnerError';
  }
}

/** What the helper sends back, per child. */
type Report =
  | { id: number; type: 'spawned'; pid: number }
  | { id: number; type: 'failed'; message: string; code?: string; sync: boolean }
  | { id: number; type: 'reported'; line: string | null }
  | { id: number; type: 'exit'; code: number | null; signal: NodeJS.Signals | null };

/**
 * The helper's program, as plain CommonJS source: it runs unbundled and untransformed whatever loads the
 * agent (tsx, a bundle), so it must not be TypeScript nor refer to any helper of the module that starts it.
 * It lives as long as its channel to the agent: when the agent exits or dies the channel closes and the
 * helper exits too, closing the supervisors' control pipes as the agent's own death would.
 */
const HELPER_SOURCE = `
const { spawn } = require('node:child_process');
const children = new Map();
const post = (m) => { if (process.connected) process.send(m); };
process.on('disconnect', () => process.exit(0));
post({ type: 'ready' });
process.on('message', (m) => {
  if (m.type === 'go') return children.get(m.id)?.stdin?.end(m.line);
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
  spawned: (child: SpawnedChild) => void;
  failed: (err: SpawnerError) => void;
  reported: (line: string | undefined) => void;
  exited: (exit: ChildExit) => void;
  child?: { exit: ChildExit | undefined; held: boolean };
}

let helper: ChildProcess | undefined;
/** Settles once the current helper runs its program (or is gone). */
let ready: { promise: Promise<void>; resolve: () => void } | undefined;
let nextId = 0;
const pending = new Map<number, Pending>();
/** Children not yet exited nor released, plus spawns in flight: while any, the helper keeps the agent alive. */
let held = 0;

/** Keeps the agent's event loop alive through the helper's channel only while a child needs watching. */
function hold(delta: number): void {
  held += delta;
  if (held > 0) {
    helper?.ref();
    helper?.channel?.ref();
  } else {
    helper?.unref();
    helper?.channel?.unref();
  }
}

function tell(message: object): void {
  if (helper?.connected) helper.send(message);
}

function onReport(r: Report | { type: 'ready' }): void {
  if (r.type === 'ready') return ready?.resolve();
  const p = pending.get(r.id);
  if (!p) return;
  switch (r.type) {
    case 'spawned':
      return p.spawned(childOf(r.id, r.pid, p));
    case 'failed':
      pending.delete(r.id);
      hold(-1);
      return p.failed(new SpawnerError(r.message, r.code, r.sync));
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

function childOf(id: number, pid: number, p: Pending): SpawnedChild {
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
    go: (line) => tell({ type: 'go', id, line }),
    release: () => {
      if (!state.held) return;
      state.held = false;
      hold(-1);
    },
  };
}

/** The helper gone (it never should: it catches what spawn throws): spawns in flight fail, live children are lost. */
function helperGone(which: ChildProcess): void {
  if (helper !== which) return;
  helper = undefined;
  ready?.resolve();
  ready = undefined;
  held = 0;
  for (const [id, p] of pending) {
    pending.delete(id);
    if (!p.child) {
      p.failed(new SpawnerError('the spawner process exited', undefined, false));
      continue;
    }
    p.reported(undefined);
    // Its hold went with the count above: a release of the lost child must not take one off the next helper's.
    p.child.held = false;
    p.child.exit = { code: null, signal: null, lost: 'the spawner process that held the supervisor exited, so its exit cannot be seen' };
    p.exited(p.child.exit);
  }
}

function theHelper(): ChildProcess {
  if (!helper) {
    // No env and no flags of the agent's (NODE_OPTIONS, --import tsx): the helper needs none, and stays small.
    // A session of its own: a terminal's Ctrl-C goes to the agent's whole process group, and the helper must
    // outlive it until the agent, handling it, has stopped its tasks (it exits with the agent's channel).
    const h = spawn(process.execPath, ['--max-old-space-size=64', '-e', HELPER_SOURCE], {
      stdio: ['ignore', 'ignore', 'ignore', 'ipc'],
      env: {},
      detached: true,
    });
    helper = h;
    let resolve!: () => void;
    const promise = new Promise<void>((r) => (resolve = r));
    ready = { promise, resolve };
    h.on('message', (m) => onReport(m as Report));
    h.on('error', () => helperGone(h));
    h.on('exit', () => helperGone(h));
    hold(0);
  }
  return helper;
}

/**
 * Starts the spawner helper ahead of the first spawn (a Node process takes tens of milliseconds to come
 * up), so that spawn does not wait for it. Idempotent.
 */
export function warmSpawner(): void {
  theHelper();
}

/** Starts the helper if it is not running; resolves once it is up (a benchmark weighs memory after that). */
export async function spawnerReady(): Promise<void> {
  const h = theHelper();
  // The helper's channel is unref'd while no child needs it; waiting for it must keep this process up.
  hold(1);
  try {
    await ready?.promise;
  } finally {
    // A helper that died meanwhile reset the count; its successor's count is not ours to lower.
    if (helper === h) hold(-1);
  }
}

/** The helper's pid, once it runs: its CPU and memory are part of what raw_exec costs (bench/). */
export function spawnerPid(): number | undefined {
  return helper?.pid;
}

/**
 * Spawns `file` with `args` in its own session (detached), stdin and fd 3 as pipes to the helper, stdout
 * and stderr ignored; resolves once it is spawned.
 */
export function spawnViaHelper(file: string, args: readonly string[], opts: { cwd: string; env: Record<string, string> }): Promise<SpawnedChild> {
  theHelper();
  const id = nextId++;
  return new Promise<SpawnedChild>((spawned, failed) => {
    pending.set(id, { spawned, failed, reported: () => undefined, exited: () => undefined });
    hold(1);
    tell({ type: 'spawn', id, file, args, cwd: opts.cwd, env: opts.env });
  });
}
