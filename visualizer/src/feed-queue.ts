/**
 * Applies the live feed in time slices. A batch (or the checkpoint a page starts from) can hold thousands
 * of messages; applied in the socket's message handler it is one long task, and a click that lands behind
 * it waits for all of it. Here frames queue up and are applied a chunk of messages at a time, for at most
 * `sliceMs` per task, yielding between tasks so input and frames get the main thread in between.
 */
import type { InspectMessage } from '../../src/inspect/protocol.ts';

/** One frame's work: its messages, and what to do before the first and after the last is applied. */
export interface FeedItem {
  messages: readonly InspectMessage[];
  before?(): void;
  after?(): void;
}

/** Tuning, with defaults for a page. */
export interface FeedQueueOptions {
  /** Longest stretch of applying per task (ms). */
  sliceMs?: number;
  /** Messages applied between two looks at the clock. */
  chunk?: number;
  now?: () => number;
  /** Runs `fn` as a new task (default: a MessageChannel message, which is not clamped as timers are). */
  yieldTo?: (fn: () => void) => void;
}

function channelYield(): (fn: () => void) => void {
  const ch = new MessageChannel();
  const waiting: (() => void)[] = [];
  ch.port1.onmessage = () => waiting.shift()?.();
  return (fn) => {
    waiting.push(fn);
    ch.port2.postMessage(null);
  };
}

/** A queue that feeds `apply` (the model's) in slices. */
export function createFeedQueue(apply: (messages: readonly InspectMessage[]) => void, opts: FeedQueueOptions = {}) {
  const sliceMs = opts.sliceMs ?? 8;
  const chunk = opts.chunk ?? 100;
  const now = opts.now ?? (() => performance.now());
  const yieldTo = opts.yieldTo ?? channelYield();
  const queue: FeedItem[] = [];
  /** Messages of the head item already applied. */
  let offset = 0;
  let scheduled = false;
  /** Bumped by `clear`: a slice scheduled before it has nothing to do with what is queued after. */
  let generation = 0;

  const run = (gen: number) => {
    // A slice scheduled before `clear`: the queue has had its own since.
    if (gen !== generation) return;
    scheduled = false;
    const start = now();
    while (queue.length > 0) {
      const item = queue[0]!;
      if (offset === 0) item.before?.();
      const end = Math.min(item.messages.length, offset + chunk);
      if (end > offset) apply(offset === 0 && end === item.messages.length ? item.messages : item.messages.slice(offset, end));
      offset = end;
      if (offset >= item.messages.length) {
        queue.shift();
        offset = 0;
        item.after?.();
      }
      if (now() - start >= sliceMs) break;
    }
    schedule();
  };
  const schedule = () => {
    if (scheduled || queue.length === 0) return;
    scheduled = true;
    const gen = generation;
    yieldTo(() => run(gen));
  };

  return {
    push(item: FeedItem): void {
      queue.push(item);
      schedule();
    },
    /** Drops what is not applied yet (a new stream's checkpoint replaces it). */
    clear(): void {
      queue.length = 0;
      offset = 0;
      generation++;
      scheduled = false;
    },
    /** Frames waiting (the head one may be partly applied). */
    pending(): number {
      return queue.length;
    },
  };
}
