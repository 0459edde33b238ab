/**
 * Spawns raw_exec supervisors from a small helper process, one per agent process. On Linux a spawn forks
 * the process that calls it (libuv uses fork, not vfork): the kernel copies the caller's page tables and
 * write-protects its memory, so the cost grows with the caller's heap, and while a thread of the agent
 * forks, the agent's other threads stall on its memory. A helper of a few megabytes of heap forks cheaply
 * and outside the agent (it replaced a spawner thread inside the agent; bench/p1-p2-start-kill.ts). The
 * helper holds each supervisor's control pipes (fd 0 carries the go, fd 3 the pid report) and sees its
 * exit; the agent keeps everything else (the intent and claim files, the output pipes, signals by pid).
 * For an agent in a worker thread the helper also opens the output pipes and passes them over its channel
 * (`passFds`, `openPipes`): a passed fd comes in through libuv, and `fs` never sees it (output-pipes.ts).
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
  /**
   * The child's fds named in `passFds`, opened through /proc when it reported (before `reported` settles),
   * in that order; undefined where that fd was not a pipe or FIFO, or the child had exited.
   */
  readonly passed: readonly (PassedPipe | undefined)[];
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

/**
 * A pipe's read end the helper opened and passed to this process: an fd here that only libuv knows. Read it
 * through `new Socket({ handle })`; one not read must be closed.
 */
export interface PassedPipe {
  close(): void;
}

/** What the helper sends back, per child or per request to open pipes. */
type Report =
  | { id: number; type: 'spawned'; pid: number }
  | { id: number; type: 'pipe'; index: number }
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
const { closeSync, constants, fstatSync, openSync } = require('node:fs');
const { Socket } = require('node:net');
const children = new Map();
const post = (m) => { if (process.connected) process.send(m); };
const openPipe = (path) => {
  let fd;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch {
    return undefined;
  }
  try {
    if (fstatSync(fd).isFIFO()) return new Socket({ fd, readable: false, writable: false });
  } catch {}
  closeSync(fd);
  return undefined;
};
const passPipes = (id, paths) => paths.forEach((path, index) => {
  const pipe = openPipe(path);
  if (!pipe || !process.connected) {
    pipe?.destroy();
    return post({ id, type: 'pipe', index });
  }
  process.send({ id, type: 'pipe', index }, pipe._handle, () => pipe.destroy());
});
process.on('disconnect', () => process.exit(0));
post({ type: 'ready' });
process.on('message', (m) => {
  if (m.type === 'go') return children.get(m.id)?.stdin?.end(m.line);
  if (m.type === 'open') return passPipes(m.id, m.paths);
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
    if (nl < 0 || told) return;
    if (m.passFds && child.exitCode === null && child.signalCode === null) passPipes(m.id, m.passFds.map((fd) => '/proc/' + child.pid + '/fd/' + fd));
    tell(text.slice(0, nl));
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
  /** The pipes passed for it so far (`passFds`), by index. */
  passed: (PassedPipe | undefined)[];
}

/** A request to open pipes: what came so far, how many are still to come, and whom to answer. */
interface Opening {
  pipes: (PassedPipe | undefined)[];
  left: number;
  done: (pipes: (PassedPipe | undefined)[]) => void;
}

let helper: ChildProcess | undefined;
/** Settles once the current helper runs its program (or is gone). */
let ready: { promise: Promise<void>; resolve: () => void } | undefined;
let nextId = 0;
const pending = new Map<number, Pending>();
const opening = new Map<number, Opening>();
/**
 * Children not yet exited nor released, plus spawns and requests to open pipes in flight: while any, the
 * helper keeps the agent alive.
 */
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

function onReport(r: Report | { type: 'ready' }, handle: unknown): void {
  if (r.type === 'ready') return ready?.resolve();
  if (r.type === 'pipe') return onPipe(r.id, r.index, handle as PassedPipe | undefined);
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

/** A pipe passed for a request to open pipes, or for a child that reported; closed if nobody waits for it. */
function onPipe(id: number, index: number, pipe: PassedPipe | undefined): void {
  const open = opening.get(id);
  if (open) {
    open.pipes[index] = pipe;
    open.left -= 1;
    if (open.left > 0) return;
    opening.delete(id);
    hold(-1);
    return open.done(open.pipes);
  }
  const p = pending.get(id);
  if (p) p.passed[index] = pipe;
  else pipe?.close();
}

function childOf(id: number, pid: number, p: Pending): SpawnedChild {
  const state = { exit: undefined as ChildExit | undefined, held: true };
  p.child = state;
  const reported = new Promise<string | undefined>((resolve) => (p.reported = resolve));
  const exited = new Promise<ChildExit>((resolve) => (p.exited = resolve));
  return {
    pid,
    reported,
    passed: p.passed,
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
  for (const [id, open] of opening) {
    opening.delete(id);
    open.done(open.pipes);
  }
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
    h.on('message', (m, handle) => onReport(m as Report, handle));
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
 * and stderr ignored; resolves once it is spawned. `passFds`: fds of the child the helper opens through
 * /proc once it reports, and passes (`SpawnedChild.passed`).
 */
export function spawnViaHelper(
  file: string,
  args: readonly string[],
  opts: { cwd: string; env: Record<string, string>; passFds?: readonly number[] },
): Promise<SpawnedChild> {
  theHelper();
  const id = nextId++;
  return new Promise<SpawnedChild>((spawned, failed) => {
    pending.set(id, { spawned, failed, reported: () => undefined, exited: () => undefined, passed: [] });
    hold(1);
    tell({ type: 'spawn', id, file, args, cwd: opts.cwd, env: opts.env, ...(opts.passFds && { passFds: opts.passFds }) });
  });
}

/**
 * Opens each of `paths` in the helper to read without waiting for a writer, and passes it here: in order,
 * undefined where it could not be opened or is not a pipe or FIFO (or the helper died before it came).
 */
export function openPipes(paths: readonly string[]): Promise<(PassedPipe | undefined)[]> {
  if (paths.length === 0) return Promise.resolve([]);
  theHelper();
  const id = nextId++;
  return new Promise((done) => {
    opening.set(id, { pipes: [], left: paths.length, done });
    hold(1);
    tell({ type: 'open', id, paths });
  });
}
