/**
 * Replays a recording (JSON lines from `recordInspection`) into the model: step by step (one actor
 * transition per step, with the events that led to it) or played back at a chosen speed.
 */
import { recordingProblem, type InspectMessage } from '../../src/inspect/protocol.ts';
import type { DivergenceLine } from '../../src/inspect/replay-format.ts';
import type { Model } from './model.ts';

/**
 * Parses a recording; bad lines are counted, not fatal, so a file cut off mid-write still replays. A
 * recording in a protocol version this page cannot read gives no messages and says why in `error`. The
 * replay lines (`replay --check`'s inputs and steps) are not the page's; a checked replay's divergence is.
 */
export function parseRecording(text: string): { messages: InspectMessage[]; bad: number; error?: string; divergence?: DivergenceLine } {
  const messages: InspectMessage[] = [];
  let bad = 0;
  let divergence: DivergenceLine | undefined;
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    try {
      const m = JSON.parse(line) as { kind?: string };
      if (m.kind === 'recording') {
        const error = recordingProblem(m);
        if (error) return { messages: [], bad: 0, error };
        continue;
      }
      if (m.kind === 'definition' || m.kind === 'actor' || m.kind === 'event' || m.kind === 'transition') messages.push(m as InspectMessage);
      else if (m.kind === 'divergence') divergence = m as DivergenceLine;
      else if (!m.kind?.startsWith('replay-')) bad++;
    } catch {
      bad++;
    }
  }
  return { messages, bad, ...(divergence && { divergence }) };
}

/** Player state the controls show. */
export interface PlayerState {
  position: number;
  total: number;
  playing: boolean;
}

// Long quiet gaps (a task running for minutes) are squeezed so playback keeps moving.
const MAX_GAP_MS = 1_000;

/** A player over `model`; `onChange` runs after every move. */
export function createReplayPlayer(model: Model, onChange: (s: PlayerState) => void) {
  let messages: InspectMessage[] = [];
  let cursor = 0;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let speed = 1;

  const state = (): PlayerState => ({ position: cursor, total: messages.length, playing: timer !== undefined });
  const atOf = (m: InspectMessage | undefined) => (m && 'at' in m ? m.at : undefined);

  /** Applies up to and including the next transition; returns false at the end. */
  const stepOnce = (): boolean => {
    if (cursor >= messages.length) return false;
    const chunk: InspectMessage[] = [];
    while (cursor < messages.length) {
      const m = messages[cursor++]!;
      chunk.push(m);
      if (m.kind === 'transition') break;
    }
    model.apply(chunk);
    return true;
  };

  const pause = () => {
    if (timer !== undefined) clearTimeout(timer);
    timer = undefined;
    onChange(state());
  };

  const tick = () => {
    // At full speed, move in chunks: one step per timer would crawl through a long recording.
    const steps = speed === Infinity ? 25 : 1;
    let moved = false;
    for (let i = 0; i < steps; i++) moved = stepOnce() || moved;
    if (!moved || cursor >= messages.length) {
      timer = undefined;
      onChange(state());
      return;
    }
    const gap = (atOf(messages[cursor]) ?? 0) - (atOf(messages[cursor - 1]) ?? 0);
    const delay = speed === Infinity ? 0 : Math.max(0, Math.min(MAX_GAP_MS, gap)) / speed;
    timer = setTimeout(tick, delay);
    onChange(state());
  };

  return {
    load(list: InspectMessage[]): void {
      pause();
      messages = list;
      cursor = 0;
      model.reset();
      onChange(state());
    },
    step(): void {
      pause();
      stepOnce();
      onChange(state());
    },
    play(): void {
      if (timer !== undefined) return;
      if (cursor >= messages.length) {
        cursor = 0;
        model.reset();
      }
      timer = setTimeout(tick, 0);
      onChange(state());
    },
    pause,
    /** Jumps to position `n` (messages applied), paused: forward by applying the gap, back by rebuilding from the start. */
    seek(n: number): void {
      pause();
      const target = Math.max(0, Math.min(messages.length, n));
      if (target >= cursor) model.apply(messages.slice(cursor, target));
      else {
        model.reset();
        model.apply(messages.slice(0, target));
      }
      cursor = target;
      onChange(state());
    },
    /** Back to the start, paused. */
    rewind(): void {
      pause();
      cursor = 0;
      model.reset();
      onChange(state());
    },
    /** 1 = recorded pace; Infinity = as fast as the page can draw. */
    setSpeed(s: number): void {
      speed = s;
    },
    state,
  };
}
