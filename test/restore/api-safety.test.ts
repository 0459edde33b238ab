/**
 * The embedding API gets the same rules as job files: an id or name that would leave the data dir is a
 * SpecError before anything touches the disk (no directory made, nothing deleted, no stray rejection).
 * And what the agent writes is readable by its user only.
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { AllocSpec } from '../../src/jobspec/types.ts';
import { recordInspection } from '../../src/inspect/record.ts';
import { createAgent } from '../../src/runtime/create-agent.ts';
import { createAllocRunner } from '../../src/runtime/create-alloc-runner.ts';

const dirs: string[] = [];
const tmp = (name: string) => {
  const d = mkdtempSync(join(tmpdir(), `allocrun-${name}-`));
  dirs.push(d);
  return d;
};
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const base: AllocSpec = { id: 'ok', job: 'j', group: 'g', type: 'batch', tasks: [{ name: 't', driver: 'mock', config: { run_for: '10ms' } }] };
const escapes: [string, AllocSpec, string][] = [
  ['an alloc id climbing out', { ...base, id: '../../victim' }, 'id'],
  ['an alloc id with a path inside', { ...base, id: 'x/../../y' }, 'id'],
  ['a task name climbing out', { ...base, tasks: [{ ...base.tasks[0]!, name: '../victim' }] }, 'tasks[0].name'],
  ['a job name that is ..', { ...base, job: '..' }, 'job'],
  ['a group name that is ..', { ...base, group: '..' }, 'group'],
];

describe('specs passed to the API', () => {
  it.each(escapes)('%s is refused by createAllocRunner with a SpecError naming the field, and nothing outside the data dir is touched', async (_what, spec, field) => {
    const root = tmp('escape');
    const dataDir = join(root, 'data', 'inner');
    const victim = join(root, 'victim');
    mkdirSync(victim, { recursive: true });
    writeFileSync(join(victim, 'keep'), 'precious');
    expect(() => createAllocRunner(spec, { dataDir })).toThrow(expect.objectContaining({ code: 'ErrSpec', message: expect.stringMatching(new RegExp(`^${field.replace(/[[\]]/g, "\\$&")}: .* must not`)) }));
    expect(existsSync(join(victim, 'keep'))).toBe(true);
    expect(existsSync(dataDir)).toBe(false);
  });

  // A periodic child's job ID is `<parent>/periodic-<time>` (Nomad's): the job ID names no file, so its `/` is allowed.
  it('runs an allocation whose job ID has a slash (a periodic child), writing nothing outside the data dir', async () => {
    const root = tmp('slash');
    const dataDir = join(root, 'data');
    const runner = createAllocRunner({ ...base, id: 'child-0', job: 'report/periodic-1700000000' }, { dataDir }).start();
    expect(await runner.done).toMatchObject({ clientStatus: 'complete' });
    runner.stop();
    expect(readdirSync(root)).toEqual(['data']);
    expect(readdirSync(join(dataDir, 'allocs'))).toEqual(['child-0']);
  });

  it.each(escapes)('%s is refused by agent.run synchronously, with no unhandled rejection and no file written', async (_what, spec, field) => {
    const dataDir = tmp('agent');
    const agent = createAgent({ dataDir });
    expect(() => agent.run(spec)).toThrow(expect.objectContaining({ code: 'ErrSpec', message: expect.stringContaining(field) }));
    expect(agent.list()).toEqual([]);
    await agent.shutdown();
    // vitest fails the run on an unhandled rejection; the data dir holds only the empty allocs/.
    expect(readdirSync(join(dataDir, 'allocs'))).toEqual([]);
  });
});

describe('files the agent writes', () => {
  const mode = (p: string) => statSync(p).mode & 0o777;

  it('state files are 0600 in a 0700 data dir and allocs/', async () => {
    const dataDir = join(tmp('perm'), 'new-data-dir');
    const agent = createAgent({ dataDir });
    const runner = agent.run(base);
    await runner.done;
    await agent.shutdown();
    expect(mode(dataDir)).toBe(0o700);
    expect(mode(join(dataDir, 'allocs'))).toBe(0o700);
    expect(mode(join(dataDir, 'allocs', 'ok', 'state.json'))).toBe(0o600);
  });

  it('the raw_exec supervisor files are in a 0700 private dir', async () => {
    const dataDir = tmp('perm');
    const spec: AllocSpec = { ...base, id: 'sup', tasks: [{ name: 't', driver: 'raw_exec', config: { command: '/bin/true' } }] };
    const agent = createAgent({ dataDir });
    expect((await agent.run(spec).done).clientStatus).toBe('complete');
    await agent.shutdown();
    const priv = join(dataDir, 'allocs', 'sup', 't', 'private');
    expect(mode(priv)).toBe(0o700);
    for (const f of readdirSync(priv).filter((n) => n.endsWith('.intent') || n.endsWith('.out'))) expect(mode(join(priv, f))).toBe(0o600);
  });

  it('--record files are 0600', async () => {
    const file = join(tmp('record'), 'run.jsonl');
    const rec = recordInspection(file);
    await rec.close();
    expect(mode(file)).toBe(0o600);
  });
});
