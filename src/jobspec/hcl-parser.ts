/**
 * The main-thread side of the HCL parser worker (hcl-worker.ts): one worker, started on first use and
 * reused, parses one file at a time. A parse that outlives its timeout terminates the worker (the only way
 * to stop WASM that blocks its thread); so does a failure that may have left the Go runtime dead. The next
 * parse starts a fresh worker. The worker is unref'd while idle so it never keeps a process alive.
 */
import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { HclRequest, HclResponse } from './hcl-worker.ts';

/** Why a parse produced no value: the parser's own error text, or that it ran out of time. */
export class HclParserError extends Error {
  constructor(
    message: string,
    /** True when the parse was stopped by its timeout. */
    readonly timedOut = false,
  ) {
    super(message);
    this.name = 'HclParserError';
  }
}

interface Job {
  req: HclRequest;
  timeoutMs: number;
  resolve: (value: unknown) => void;
  reject: (err: Error) => void;
}

let worker: Worker | undefined;
/** Whether `worker` has said it is ready (its Go runtime loaded); requests wait for that. */
let ready = false;
/** A worker that neither gets ready nor fails in this long is given up on. */
const START_TIMEOUT_MS = 30_000;
let startTimer: NodeJS.Timeout | undefined;
let running: (Job & { timer: NodeJS.Timeout }) | undefined;
const queue: Job[] = [];
let nextId = 1;

/**
 * Parses HCL text with hcl2json in the worker. Rejects with HclParserError: with the parser's message
 * (diagnostics name `filename`), or `timedOut` when it did not answer within `timeoutMs`.
 */
export function parseHclInWorker(filename: string, text: string, timeoutMs: number): Promise<unknown> {
  return new Promise((resolve, reject) => {
    queue.push({ req: { id: nextId++, filename, text }, timeoutMs, resolve, reject });
    pump();
  });
}

/**
 * Starts the worker if it is not running and waits until it is ready (its Go runtime loaded), so the
 * next parse costs only parsing: for callers that want start-up off their critical path, or out of a
 * measurement.
 */
export async function warmHclWorker(): Promise<void> {
  await parseHclInWorker('warm-up.hcl', '', START_TIMEOUT_MS);
}

/** Stops the worker (tests and embedders that want no thread left); the next parse starts a new one. */
export async function stopHclWorker(): Promise<void> {
  const w = worker;
  worker = undefined;
  clearTimeout(startTimer);
  if (running) finish().reject(new HclParserError('the HCL parser worker was stopped'));
  if (w) await w.terminate();
  pump(); // parses queued meanwhile get a new worker
}

/**
 * The worker module next to this one, with this module's own extension: `.ts` when running from the
 * sources (tsx, vitest), `.js` from the compiled dist/.
 */
export function hclWorkerUrl(): URL {
  return new URL(`./hcl-worker${extname(fileURLToPath(import.meta.url))}`, import.meta.url);
}

function startWorker(): Worker {
  const url = hclWorkerUrl();
  // A worker thread does not inherit the TypeScript loader of its parent (tsx, vitest): register tsx's
  // ESM loader in it before importing the .ts worker. From dist/ the worker is plain JavaScript.
  const w = url.pathname.endsWith('.ts')
    ? new Worker(`import(${JSON.stringify(import.meta.resolve('tsx/esm/api'))}).then((tsx) => { tsx.register(); return import(${JSON.stringify(url.href)}); });`, { eval: true })
    : new Worker(url);
  w.on('message', (res: HclResponse) => {
    if (w !== worker) return;
    if ('ready' in res) {
      clearTimeout(startTimer);
      ready = true;
      pump();
      return;
    }
    if (!running || res.id !== running.req.id) return;
    const job = finish();
    if (res.ok) job.resolve(res.value);
    else job.reject(new HclParserError(res.message));
  });
  w.on('error', (err) => fail(w, `the HCL parser worker failed: ${err.message}`));
  w.on('exit', (code) => fail(w, `the HCL parser worker exited (code ${code})`));
  return w;
}

function pump(): void {
  if (running || queue.length === 0) return;
  if (!worker) {
    ready = false;
    const w = (worker = startWorker()); // pump again when it is ready
    startTimer = setTimeout(() => {
      fail(w, `the HCL parser worker did not start within ${formatMs(START_TIMEOUT_MS)}`);
      void w.terminate();
    }, START_TIMEOUT_MS);
  }
  worker.ref(); // a parse waiting or in flight keeps the process alive; an idle worker does not
  if (!ready) return;
  const job = queue.shift()!;
  const timer = setTimeout(() => {
    const w = worker;
    worker = undefined;
    void w?.terminate();
    finish().reject(new HclParserError(`the HCL parser did not finish within ${formatMs(job.timeoutMs)}`, true));
  }, job.timeoutMs);
  running = { ...job, timer };
  worker.postMessage(job.req);
}

/** Ends the running job (clearing its timer) and moves on to the next; returns the ended job. */
function finish(): Job {
  const job = running!;
  clearTimeout(job.timer);
  running = undefined;
  if (queue.length > 0) queueMicrotask(pump);
  else worker?.unref();
  return job;
}

/**
 * The worker died under a job, or before it was ready: fail that job (or the first waiting one, so a
 * worker that cannot start fails parses instead of retrying forever) and forget the worker; the next
 * parse starts afresh.
 */
function fail(w: Worker, message: string): void {
  if (w !== worker) return;
  worker = undefined;
  clearTimeout(startTimer);
  if (running) finish().reject(new HclParserError(message));
  else {
    queue.shift()?.reject(new HclParserError(message));
    if (queue.length > 0) queueMicrotask(pump);
  }
}

function formatMs(ms: number): string {
  return ms >= 1000 ? `${+(ms / 1000).toFixed(1)}s` : `${ms}ms`;
}
