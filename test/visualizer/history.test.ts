import { describe, expect, it } from 'vitest';
import { createHistory, type Checkpoint, type HistoryLimits } from '../../src/inspect/history.ts';

/** Checkpoints named after the batch they follow, so a replay's first frame says which one was sent. */
function fixture(limits: HistoryLimits, startCut = false) {
  let last = -1;
  let taken = 0;
  const take = (): Checkpoint => {
    taken++;
    return { json: JSON.stringify([{ after: last }]), count: 1 };
  };
  const history = createHistory(limits, take, -1, startCut);
  const record = (n: number) => {
    for (let i = 0; i < n; i++) {
      const seq = ++last;
      // Two messages a batch, 40 bytes of frame.
      history.record(seq, JSON.stringify({ type: 'batch', seq, messages: [seq, seq] }).padEnd(40), 2);
    }
  };
  const seqsOf = (frames: string[]) => frames.filter((f) => f.includes('"batch"')).map((f) => (JSON.parse(f) as { seq: number }).seq);
  return { history, record, seqsOf, taken: () => taken };
}

const roomy: HistoryLimits = { maxMessages: 1_000, maxBytes: 1_000_000, segments: 4 };

describe('the inspector history', () => {
  it('gives a page that connects the oldest checkpoint and every batch after it, in order', () => {
    const { history, record, seqsOf } = fixture(roomy);
    record(5);
    const replay = history.replay();
    expect(replay.resumed).toBe(false);
    expect(replay.cut).toBe(false);
    expect(JSON.parse(replay.frames[0]!)).toEqual({ type: 'checkpoint', seq: -1, cut: false, messages: [{ after: -1 }] });
    expect(seqsOf(replay.frames)).toEqual([0, 1, 2, 3, 4]);
  });

  it("takes a checkpoint when the batches since the last one pass a segment's share of the cap", () => {
    // 100 messages / 4 segments = 25 a segment: a checkpoint after every 13th batch (26 messages).
    const { history, record, taken } = fixture({ maxMessages: 100, maxBytes: 1_000_000, segments: 4 });
    record(12);
    expect(taken()).toBe(1);
    record(1);
    expect(taken()).toBe(2);
    expect(history.stats().segments).toBe(2);
  });

  it('drops the oldest segment (its checkpoint and batches) over the message cap, and says history was cut', () => {
    const { history, record, seqsOf } = fixture({ maxMessages: 100, maxBytes: 1_000_000, segments: 4 });
    record(200);
    const s = history.stats();
    expect(s.dropped).toBe(true);
    expect(s.messages).toBeLessThanOrEqual(100);
    const replay = history.replay();
    expect(replay.cut).toBe(true);
    const first = JSON.parse(replay.frames[0]!) as { type: string; seq: number; cut: boolean; messages: { after: number }[] };
    expect(first).toMatchObject({ type: 'checkpoint', cut: true });
    // The checkpoint stands for every batch up to its seq; the batches that follow start right after it.
    expect(first.messages[0]!.after).toBe(first.seq);
    const seqs = seqsOf(replay.frames);
    expect(seqs[0]).toBe(first.seq + 1);
    expect(seqs.at(-1)).toBe(199);
    expect(seqs).toEqual(Array.from({ length: seqs.length }, (_, i) => first.seq + 1 + i));
  });

  it('drops the oldest segment over the byte cap too', () => {
    // 40-byte frames, 2,000 bytes: about 50 batches kept whatever the message cap.
    const { history, record } = fixture({ maxMessages: 1_000_000, maxBytes: 2_000, segments: 4 });
    record(500);
    expect(history.stats().bytes).toBeLessThanOrEqual(2_000);
    expect(history.stats().dropped).toBe(true);
    expect(history.replay().frames.length).toBeLessThan(60);
  });

  it('never drops the newest segment: what is kept stays within the cap plus one segment', () => {
    // A cap smaller than one checkpoint and a batch: the newest segment is kept all the same.
    const { history, record } = fixture({ maxMessages: 2, maxBytes: 1_000_000, segments: 2 });
    record(50);
    expect(history.stats().segments).toBe(1);
    expect(history.replay().frames.length).toBeGreaterThanOrEqual(1);
    expect(JSON.parse(history.replay().frames[0]!)).toMatchObject({ type: 'checkpoint', seq: 49 });
  });

  it('gives a page that has every batch up to N only the batches after N', () => {
    const { history, record, seqsOf } = fixture(roomy);
    record(10);
    const replay = history.replay(6);
    expect(replay.resumed).toBe(true);
    expect(replay.frames.every((f) => f.includes('"batch"'))).toBe(true);
    expect(seqsOf(replay.frames)).toEqual([7, 8, 9]);
    expect(history.replay(9)).toEqual({ frames: [], resumed: true, cut: false });
  });

  it('resumes across segments: the batches after N from every segment, without their checkpoints', () => {
    const { history, record, seqsOf } = fixture({ maxMessages: 100, maxBytes: 1_000_000, segments: 4 });
    record(30);
    expect(history.stats().segments).toBeGreaterThan(1);
    const replay = history.replay(5);
    expect(replay.resumed).toBe(true);
    expect(seqsOf(replay.frames)).toEqual(Array.from({ length: 24 }, (_, i) => 6 + i));
    expect(replay.frames.some((f) => f.includes('"checkpoint"'))).toBe(false);
  });

  it('gives a page whose last batch was dropped, or is ahead of the stream, the checkpoint again', () => {
    const { history, record } = fixture({ maxMessages: 100, maxBytes: 1_000_000, segments: 4 });
    record(200);
    const dropped = history.replay(3);
    expect(dropped.resumed).toBe(false);
    expect(dropped.cut).toBe(true);
    expect(JSON.parse(dropped.frames[0]!)).toMatchObject({ type: 'checkpoint' });
    // A page of another stream's life (a seq this stream has not reached) starts over.
    expect(history.replay(10_000).resumed).toBe(false);
  });

  it('is cut from the start when the stream already had actors before the history began', () => {
    const { history, record } = fixture(roomy, true);
    record(3);
    expect(history.replay().cut).toBe(true);
    expect(JSON.parse(history.replay().frames[0]!)).toMatchObject({ type: 'checkpoint', seq: -1, cut: true });
  });
});
