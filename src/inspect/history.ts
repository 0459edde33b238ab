/**
 * The feed's memory of the past, so a page that opens late (or comes back) sees how things got where they
 * are: a ring of the latest batches, cut into segments, each starting at a checkpoint (the stream's
 * picture: every actor's state and context, picture.ts) that stands for every batch before it.
 *
 * Rules:
 * - A page gets the oldest checkpoint still kept and every batch after it, in order: the most history the
 *   cap allows. A page that already has every batch up to N (of this same stream) gets only those after N.
 * - A checkpoint is taken when the batches since the last one pass a segment's share of the cap
 *   (`1/segments` of the messages or bytes), so the oldest history can be dropped a segment at a time.
 * - Over the cap, the oldest segment (its checkpoint and its batches) is dropped; never the newest. The
 *   kept history is then within the cap plus one segment, and the page is told history was cut.
 * - A history started on a stream that already had actors is cut from the start: its first checkpoint
 *   stands for messages no page will see.
 * Batches are kept as the JSON text sent to pages (serialized once, whatever the number of pages).
 */

/** How much history is kept. */
export interface HistoryLimits {
  /** Messages kept, checkpoints' included. */
  maxMessages: number;
  /** Bytes of JSON kept, checkpoints' included. */
  maxBytes: number;
  /** Segments the cap is cut into: a checkpoint is taken every `1/segments` of it. */
  segments: number;
}

/** Enough for a few minutes of a busy agent (a page replays it in well under a second), a few MB of memory. */
export const DEFAULT_HISTORY_LIMITS: HistoryLimits = { maxMessages: 40_000, maxBytes: 16 * 1024 * 1024, segments: 4 };

/** A checkpoint as taken: the picture's messages as JSON text, and how many. */
export interface Checkpoint {
  json: string;
  count: number;
}

interface Segment {
  /** The last batch the checkpoint stands for (-1: none, the stream's start). */
  seq: number;
  checkpoint: Checkpoint;
  /** Frames (JSON text) of the batches after the checkpoint, in order, and their sequence numbers. */
  batches: string[];
  seqs: number[];
  messages: number;
  bytes: number;
}

/** What a page is sent on connecting. */
export interface Replay {
  /** Frames in order: a checkpoint frame first unless the page resumes, then batch frames. */
  frames: string[];
  /** True when the page resumes after its last batch: no checkpoint, no reset. */
  resumed: boolean;
  /** True when the page starts from a checkpoint that stands for messages it will never get. */
  cut: boolean;
}

/** The history's state; feed it every batch in order. */
export interface History {
  /** Records batch `seq` (its frame's JSON text, holding `count` messages); may take a checkpoint and drop the oldest segment. */
  record(seq: number, frame: string, count: number): void;
  /** What a page that has every batch up to `after` (undefined: none) gets. */
  replay(after?: number): Replay;
  /** Kept totals, for tests and the bench: messages, bytes, segments, and whether anything was dropped. */
  stats(): { messages: number; bytes: number; segments: number; dropped: boolean; oldestSeq: number; lastSeq: number };
}

/** The checkpoint frame's JSON text: the page resets to it. */
export function checkpointFrame(seq: number, cut: boolean, checkpoint: Checkpoint): string {
  return `{"type":"checkpoint","seq":${seq},"cut":${cut},"messages":${checkpoint.json}}`;
}

/**
 * A history starting after batch `startSeq` (-1 for a new stream), from the checkpoint `take()` gives now;
 * `take()` is called again whenever a segment fills. `startCut`: the stream already had actors.
 */
export function createHistory(limits: HistoryLimits, take: () => Checkpoint, startSeq = -1, startCut = false): History {
  if (!(limits.segments >= 2)) throw new Error('history: segments must be at least 2 (one is kept while an older one is dropped)');
  const perSegment = { messages: limits.maxMessages / limits.segments, bytes: limits.maxBytes / limits.segments };
  const newSegment = (seq: number): Segment => {
    const checkpoint = take();
    return { seq, checkpoint, batches: [], seqs: [], messages: checkpoint.count, bytes: checkpoint.json.length };
  };
  const segments: Segment[] = [newSegment(startSeq)];
  let messages = segments[0]!.messages;
  let bytes = segments[0]!.bytes;
  let dropped = startCut;
  let lastSeq = startSeq;

  return {
    record(seq, frame, count) {
      let current = segments[segments.length - 1]!;
      current.batches.push(frame);
      current.seqs.push(seq);
      current.messages += count;
      current.bytes += frame.length;
      messages += count;
      bytes += frame.length;
      lastSeq = seq;
      const batchMessages = current.messages - current.checkpoint.count;
      const batchBytes = current.bytes - current.checkpoint.json.length;
      if (batchMessages >= perSegment.messages || batchBytes >= perSegment.bytes) {
        current = newSegment(seq);
        segments.push(current);
        messages += current.messages;
        bytes += current.bytes;
      }
      while (segments.length > 1 && (messages > limits.maxMessages || bytes > limits.maxBytes)) {
        const oldest = segments.shift()!;
        messages -= oldest.messages;
        bytes -= oldest.bytes;
        dropped = true;
      }
    },
    replay(after) {
      const first = segments[0]!;
      if (after !== undefined && after >= first.seq && after <= lastSeq) {
        const frames: string[] = [];
        for (const s of segments) for (let i = 0; i < s.batches.length; i++) if (s.seqs[i]! > after) frames.push(s.batches[i]!);
        return { frames, resumed: true, cut: false };
      }
      const frames = [checkpointFrame(first.seq, dropped, first.checkpoint)];
      for (const s of segments) frames.push(...s.batches);
      return { frames, resumed: false, cut: dropped };
    },
    stats: () => ({ messages, bytes, segments: segments.length, dropped, oldestSeq: segments[0]!.seq, lastSeq }),
  };
}
