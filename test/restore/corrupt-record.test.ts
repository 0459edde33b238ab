/**
 * One damaged state.json must not cost the other allocations: the agent names the file, moves it aside as
 * `state.json.corrupt-<time>` and restores the rest; `allocrun status` warns and lists the rest.
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { statusCommand } from '../../src/cli/status.ts';
import type { AllocSpec } from '../../src/jobspec/types.ts';
import { createAgent } from '../../src/runtime/create-agent.ts';

const spec = (id: string): AllocSpec => ({ id, job: 'j', group: 'g', type: 'service', tasks: [{ name: 't', driver: 'mock', config: { run_for: '1h' } }] });
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** A data dir holding two running allocations, saved by an agent that then shut down. */
async function dataDirWithTwoAllocs(): Promise<string> {
  const dataDir = mkdtempSync(join(tmpdir(), 'allocrun-corrupt-'));
  dirs.push(dataDir);
  const agent = createAgent({ dataDir });
  for (const id of ['good', 'bad']) agent.run(spec(id));
  await agent.shutdown();
  return dataDir;
}

const good = (dataDir: string) => JSON.parse(readFileSync(join(dataDir, 'allocs', 'good', 'state.json'), 'utf8')) as Record<string, unknown>;

// The ways a record gets damaged: cut short, emptied, overwritten, edited by hand, or mixed up.
const damage: [string, (dataDir: string) => string][] = [
  ['an empty file', () => ''],
  ['truncated JSON', (d) => JSON.stringify(good(d)).slice(0, 200)],
  ['not JSON at all', () => '\u0000\u0001garbage'],
  ['JSON null', () => 'null'],
  ['a list', () => '[1, 2]'],
  ['no spec', (d) => JSON.stringify({ ...good(d), spec: undefined })],
  ['a spec with an escaping id', (d) => JSON.stringify({ ...good(d), spec: { ...spec('bad'), id: '../../x' } })],
  ['the record of another allocation', (d) => JSON.stringify(good(d))],
  ['a state that is a string', (d) => JSON.stringify({ ...good(d), spec: spec('bad'), state: 'running' })],
  ['a task state without events', (d) => JSON.stringify({ ...good(d), spec: spec('bad'), state: { clientStatus: 'running', taskStates: { t: { state: 'running' } } } })],
  ['a snapshot that is not a runner snapshot', (d) => JSON.stringify({ ...good(d), spec: spec('bad'), snapshot: { hello: 1 } })],
  ['a runner snapshot this runtime cannot resume', (d) => JSON.stringify({ ...good(d), spec: spec('bad'), snapshot: { __allocrun: 'alloc-runner', snapshot: { value: 'no-such-state', context: {} } } })],
];

describe('a damaged state record', () => {
  it.each(damage)('(%s) is named, moved aside, and every other allocation is restored', async (_kind, make) => {
    const dataDir = await dataDirWithTwoAllocs();
    const badFile = join(dataDir, 'allocs', 'bad', 'state.json');
    writeFileSync(badFile, make(dataDir));

    const seen: string[] = [];
    const agent = createAgent({ dataDir, onRestoreError: (e) => seen.push(e.message) });
    const restored = await agent.start();
    expect(restored.map((r) => r.actor.id)).toEqual(['good']);
    expect(agent.restoreErrors).toHaveLength(1);
    const err = agent.restoreErrors[0]!;
    expect(err).toMatchObject({ code: 'ErrStateStore', path: badFile });
    expect(err.message).toContain(badFile);
    expect(err.message.startsWith(badFile)).toBe(true);
    expect(seen).toEqual([err.message]);
    // Moved aside: reported once, never read again, kept for a human to look at.
    expect(existsSync(badFile)).toBe(false);
    const aside = readdirSync(join(dataDir, 'allocs', 'bad')).filter((f) => f.startsWith('state.json.corrupt-'));
    expect(aside).toHaveLength(1);
    expect(err.message).toContain(aside[0]);
    restored[0]!.send({ type: 'KILL' });
    await restored[0]!.done;
    await agent.shutdown();
  });

  it('(a snapshot that fails as it starts) stays moved aside: no save of the failed runner brings it back', async () => {
    const dataDir = await dataDirWithTwoAllocs();
    const badFile = join(dataDir, 'allocs', 'bad', 'state.json');
    const record = JSON.parse(readFileSync(badFile, 'utf8')) as { snapshot: { snapshot: { children: Record<string, { src: string }> } } };
    // A task runner made by an actor this runtime does not have: the runner errors as it starts.
    for (const child of Object.values(record.snapshot.snapshot.children)) child.src = 'no-such-actor';
    writeFileSync(badFile, JSON.stringify(record));

    const agent = createAgent({ dataDir });
    const restored = await agent.start();
    expect(restored.map((r) => r.actor.id)).toEqual(['good']);
    expect(agent.restoreErrors[0]!.message).not.toMatch(/: undefined;/);
    restored[0]!.send({ type: 'KILL' });
    await restored[0]!.done;
    await agent.shutdown();
    expect(existsSync(badFile)).toBe(false);
    // The next agent finds nothing to report.
    const next = createAgent({ dataDir });
    await next.start();
    expect(next.restoreErrors).toEqual([]);
    await next.shutdown();
  });

  it('leaves `allocrun status` working: a warning naming the file, then the healthy allocations', async () => {
    const dataDir = await dataDirWithTwoAllocs();
    const badFile = join(dataDir, 'allocs', 'bad', 'state.json');
    writeFileSync(badFile, '{"spec": ');
    const out: string[] = [];
    const err: string[] = [];
    vi.spyOn(process.stdout, 'write').mockImplementation((s) => (out.push(String(s)), true));
    vi.spyOn(process.stderr, 'write').mockImplementation((s) => (err.push(String(s)), true));
    try {
      expect(await statusCommand.run(['--data-dir', dataDir])).toBe(0);
    } finally {
      vi.restoreAllMocks();
    }
    expect(err.join('')).toContain(`warning: ${badFile} is not a valid allocation record`);
    expect(out.join('')).toMatch(/^ID\s+Job/);
    expect(out.join('')).toContain('good');
    expect(out.join('')).not.toContain('bad ');
    // status only reads: the damaged file is still where it was.
    expect(existsSync(badFile)).toBe(true);
  });

  it('an alloc dir without a state file is not an allocation (nothing reported)', async () => {
    const dataDir = await dataDirWithTwoAllocs();
    mkdirSync(join(dataDir, 'allocs', 'leftover'));
    const agent = createAgent({ dataDir });
    expect((await agent.start()).map((r) => r.actor.id).sort()).toEqual(['bad', 'good']);
    expect(agent.restoreErrors).toEqual([]);
    for (const r of agent.list()) r.send({ type: 'KILL' });
    await Promise.all(agent.list().map((r) => r.done));
    await agent.shutdown();
  });
});
