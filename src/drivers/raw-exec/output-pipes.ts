/**
 * The read ends of a supervisor's output pipes, and who opens them. On the main thread the agent opens them
 * itself through `fs` and hands the fds to sockets. In a worker thread it must not: Node tracks each fd a
 * worker opens through `fs` until `fs.close`, and closes what it still tracks when the worker ends; a socket
 * closes its fd through libuv, so the number stayed tracked, and the worker's end closed whatever held it by
 * then (another thread's file; a libuv loop's eventfd, and the process aborted). There the spawner helper
 * opens them and passes them over its channel (spawner.ts `passFds`, `openPipes`), so `fs` never sees them.
 * The main thread, where Node tracks nothing, keeps its own opens: passing costs IPC on every start, the
 * helper waiting for the agent's acknowledgement of each fd (bench/output-pipes.ts).
 */
import { closeSync, constants, fstatSync, openSync } from 'node:fs';
import { Socket, type SocketConstructorOpts } from 'node:net';
import { isMainThread } from 'node:worker_threads';
import { openPipes, type PassedPipe } from './spawner.ts';

/** A pipe's read end, not read yet: a socket to read it (which then owns it), or closed. */
export interface ReadEnd {
  reader(): Socket;
  close(): void;
}

/** Opens each of `paths` to read without waiting for a writer; undefined where it is not a pipe or FIFO. */
export type PipeOpener = (paths: readonly string[]) => (ReadEnd | undefined)[] | Promise<(ReadEnd | undefined)[]>;

function fdEnd(fd: number): ReadEnd {
  return { reader: () => new Socket({ fd, readable: true, writable: false }), close: () => closeSync(fd) };
}

/** A pipe the spawner helper passed, as a read end. */
export function passedEnd(pipe: PassedPipe): ReadEnd {
  return {
    // `handle` is how Node's child_process wraps a handle passed over IPC: an option of Socket's not in its types.
    reader: () => new Socket({ handle: pipe, readable: true, writable: false } as SocketConstructorOpts),
    close: () => pipe.close(),
  };
}

function openPipe(path: string): ReadEnd | undefined {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch {
    return undefined;
  }
  try {
    if (fstatSync(fd).isFIFO()) return fdEnd(fd);
  } catch {
    // fall through: not something to read the task's output from
  }
  closeSync(fd);
  return undefined;
}

/** Through `fs`, in this thread, at once: for the main thread. */
export const openHere: PipeOpener = (paths) => paths.map(openPipe);

/** By the spawner helper, passed over its channel: for a worker thread. */
export const openInHelper: PipeOpener = async (paths) => (await openPipes(paths)).map((pipe) => pipe && passedEnd(pipe));

/** Whether this thread's output pipes come from the spawner helper: in a worker thread. */
export const pipesFromHelper = !isMainThread;

/** This thread's way. */
export const openPipesOfThread: PipeOpener = pipesFromHelper ? openInHelper : openHere;
