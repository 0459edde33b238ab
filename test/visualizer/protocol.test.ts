import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AnyActorRef } from 'xstate';
import { createInspectionStream } from '../../src/inspect/inspection-stream.ts';
import { PROTOCOL_VERSION, type InspectMessage } from '../../src/inspect/protocol.ts';
import { serveReplay } from '../../src/inspect/replay.ts';
import { createAllocRunner } from '../../src/runtime/create-alloc-runner.ts';
import { SimulatedClock } from '../../src/testing/simulated-clock.ts';
import { Model } from '../../visualizer/src/model.ts';
import { parseRecording } from '../../visualizer/src/replay-player.ts';
import { advanceUntil, alloc, mockTask } from './fixtures.ts';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'allocrun-protocol-'));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

/** What the page shows of each actor, by sessionId. */
function views(messages: readonly InspectMessage[]) {
  const model = new Model(false);
  model.apply(messages);
  return Object.fromEntries(
    [...model.actors.values()].map((a) => [a.sessionId, { id: a.id, parent: a.parentSessionId, status: a.status, value: a.value, context: a.context, output: a.output, error: a.error }]),
  );
}

/** The page shows `root` and its machine children as their own snapshots say they are now. */
function expectShowsMachines(shown: ReturnType<typeof views>, root: AnyActorRef) {
  for (const a of [root, ...Object.values(root.getSnapshot().children as Record<string, AnyActorRef>)]) {
    const snap = a.getSnapshot() as { value?: unknown; context?: unknown; status: string };
    if (snap.value !== undefined) expect(shown[a.sessionId]).toMatchObject({ status: snap.status, value: snap.value, context: JSON.parse(JSON.stringify(snap.context)) });
  }
}

/** Whether `p` has settled, asked at any time. */
function settled(p: Promise<unknown>): () => boolean {
  let done = false;
  void p.then(() => (done = true));
  return () => done;
}

// Messages as they travel: JSON, so nothing in memory (shared objects, undefined fields) can make them look alike.
const wire = (messages: readonly InspectMessage[]) => JSON.parse(JSON.stringify(messages)) as InspectMessage[];

/** An allocation `id` (a prestart task, a main task that fails once and restarts, a sidecar) started on a read stream; `live` gets every message as sent. */
function startThreeTasks(id: string, mainRunFor: string) {
  const clock = new SimulatedClock(0);
  const stream = createInspectionStream({ now: () => clock.now() });
  const live: InspectMessage[] = [];
  stream.subscribe((b) => live.push(...wire(b)));
  const spec = alloc(id, [
    mockTask('init', { run_for: '1s' }, { lifecycle: { hook: 'prestart' } }),
    mockTask('web', { run_for: mainRunFor, exit_code: 1 }, { restart: { attempts: 1, interval: 60_000, delay: 500, mode: 'fail' } }),
    mockTask('side', { run_for: '1h' }, { lifecycle: { hook: 'poststart', sidecar: true } }),
  ]);
  const runner = createAllocRunner(spec, { clock, dataDir: dir, inspect: stream.inspect }).start();
  return { clock, stream, live, runner };
}

describe('what the page rebuilds from the stream', () => {
  it('is the same from every live message as from a late joiner’s picture, mid-run and at the end', async () => {
    const { clock, stream, live, runner } = startThreeTasks('a-same', '3s');
    const finished = settled(runner.done);
    await advanceUntil(clock, () => runner.getState().taskStates.web?.state === 'running');
    stream.flush();
    const mid = views(live);
    expect(mid).toEqual(views(wire(stream.snapshotForLateJoiner())));
    // And both are what the actors themselves say now.
    expectShowsMachines(mid, runner.actor);

    await advanceUntil(clock, finished);
    stream.flush();
    const end = views(live);
    expect(end).toEqual(views(wire(stream.snapshotForLateJoiner())));
    // Hooks that settled in the batch that started them came as one message each (and the picture lists them apart).
    expect(live.some((m) => m.kind === 'actor' && m.settled)).toBe(true);
    // The failed task restarted once: more than one start, and the alloc ended failed.
    const root = Object.values(end).find((a) => a.parent === undefined)!;
    expect((root.context as { clientStatus: string }).clientStatus).toBe('failed');
    // Hooks finished with their output, carried by their done events alone.
    const taskDir = Object.values(end).filter((a) => a.id === 'prestart:task_dir');
    expect(taskDir.length).toBeGreaterThan(0);
    for (const a of taskDir) expect(a).toMatchObject({ status: 'done', output: { state: { is_done: 'true' } } });
  });

  it('is right for a reader that comes after nobody read the stream: the picture, then what changed since it', async () => {
    const clock = new SimulatedClock(0);
    const stream = createInspectionStream({ now: () => clock.now() });
    const spec = alloc('a-late', [mockTask('init', { run_for: '1s' }, { lifecycle: { hook: 'prestart' } }), mockTask('web', { run_for: '3s' })]);
    // A first reader while the prestart task runs, as a page that is then closed.
    const first = stream.subscribe(() => {});
    const runner = createAllocRunner(spec, { clock, dataDir: dir, inspect: stream.inspect }).start();
    const finished = settled(runner.done);
    await advanceUntil(clock, () => runner.getState().taskStates.init?.state === 'running');
    expect(runner.getState().taskStates.web?.state).toBe('pending');
    stream.flush();
    first();
    // Unread, the stream keeps only the picture; then a reader arrives mid-run, as a page connecting does.
    await advanceUntil(clock, () => runner.getState().taskStates.web?.state === 'running');
    stream.flush();
    const read: InspectMessage[] = wire(stream.snapshotForLateJoiner());
    const unsubscribe = stream.subscribe((b) => read.push(...wire(b)));
    await advanceUntil(clock, finished);
    stream.flush();
    unsubscribe();
    const end = views(read);
    expectShowsMachines(end, runner.actor);
    expect((end[runner.actor.sessionId]!.context as { clientStatus: string }).clientStatus).toBe('complete');
  });
});

describe('task states', () => {
  it('are sent once: what an alloc mirrors of its task runners, or the runner of its alloc, is a copy of the other', async () => {
    const { clock, stream, live, runner } = startThreeTasks('a-once', '2s');
    await advanceUntil(clock, settled(runner.done));
    stream.flush();
    // Each task event travels once, in the alloc's patches or in its task runner's, never in both.
    const taskOf = new Map(live.flatMap((m) => (m.kind === 'actor' ? [[m.sessionId, m.id] as const] : [])));
    const sent = new Map<string, number>();
    let copies = 0;
    for (const m of live) {
      if (m.kind !== 'transition') continue;
      for (const p of m.patch ?? []) {
        if (p.copy) copies++;
        const task = p.path[0] === 'taskStates' ? p.path[1] : p.path[0] === 'taskState' ? taskOf.get(m.sessionId) : undefined;
        for (const ev of p.append ?? []) if (task !== undefined && p.path.at(-1) === 'events') sent.set(`${task} ${JSON.stringify(ev)}`, (sent.get(`${task} ${JSON.stringify(ev)}`) ?? 0) + 1);
      }
    }
    expect(sent.size).toBeGreaterThan(15);
    expect([...sent].filter(([, n]) => n > 1)).toEqual([]);
    expect(copies).toBeGreaterThan(10);
    // And the page still shows every task's state in both places, as the actors hold it, live as for a late joiner.
    const end = views(live);
    expectShowsMachines(end, runner.actor);
    expect(end).toEqual(views(wire(stream.snapshotForLateJoiner())));
  });
});

describe('recordings', () => {
  it('replays one made with protocol version 2, which sent every value and output in full', async () => {
    const text = await readFile(new URL('./recordings/protocol-2.jsonl', import.meta.url), 'utf8');
    const { messages, bad, error } = parseRecording(text);
    expect({ bad, error }).toEqual({ bad: 0, error: undefined });
    const end = views(messages);
    const root = Object.values(end).find((a) => a.parent === undefined)!;
    expect(root.id).toBe('a-v2');
    expect((root.context as { clientStatus: string }).clientStatus).toBe('complete');
    const web = Object.values(end).find((a) => a.id === 'web')!;
    expect(web.value).toMatchObject({ terminal: expect.anything() });
    for (const a of Object.values(end).filter((x) => x.id === 'prestart:task_dir')) expect(a).toMatchObject({ status: 'done', output: { state: { is_done: 'true' } } });
  });

  it('are refused, saying which versions can be read, when made with a protocol version this allocrun cannot read', async () => {
    for (const version of [1, PROTOCOL_VERSION + 1]) {
      const text = `${JSON.stringify({ kind: 'recording', version, startedAt: 0 })}\n${JSON.stringify({ kind: 'event', at: 0, target: 'x:0', type: 'GO' })}\n`;
      const { messages, error } = parseRecording(text);
      expect(messages).toEqual([]);
      expect(error).toContain(`protocol version ${version}`);
      expect(error).toContain(`versions 2 to ${PROTOCOL_VERSION}`);
      const file = join(dir, `v${version}.jsonl`);
      await writeFile(file, text);
      await expect(serveReplay(file)).rejects.toThrow(`cannot replay ${file}: the recording was made with inspection protocol version ${version}`);
    }
  });
});
