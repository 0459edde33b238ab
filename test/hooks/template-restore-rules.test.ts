/**
 * The template hook in a restored task runner, called as the runner calls it.
 * - An agent that died while its task ran: the active `poststart:template` call re-run by the restore, then, on
 *   RESTORED, cut short by the restore's own prestart (`running`). A variable changed while the agent was down
 *   is acted on (change_mode restart) whichever of the two renders rewrote the file.
 * - An agent that died after the prestart rendered but before the start was saved: the runner runs the prestart
 *   again before starting (Nomad's restored runner without a handle), so the task starts with the new file and
 *   is not restarted, unless the start finds the workload the dead agent had spawned with the old one (`adopted`).
 * A task that never rendered before is not restarted for its first render.
 */
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Subject } from 'rxjs';
import { afterAll, describe, expect, it } from 'vitest';
import { templateHook } from '../../src/hooks/template-hook.ts';
import type { TaskSpec, TemplateSpec } from '../../src/jobspec/types.ts';

const scratch = await mkdtemp(join(tmpdir(), 'allocrun-template-restore-'));
afterAll(() => rm(scratch, { recursive: true, force: true }));

const template: TemplateSpec = {
  destination: 'local/v', data: '{{ with nomadVar "nomad/jobs/web" }}v={{ .v }}{{ end }}',
  changeMode: 'restart', splay: 0, perms: '0644', leftDelim: '{{', rightDelim: '}}', env: false, errMissingKey: false,
  wait: { min: 0, max: 0 },
};
const task: TaskSpec = { name: 't', driver: 'raw_exec', config: { command: '/bin/sleep', args: ['300'] }, templates: [template] };

/** One variable, `v` as given, with no changes after (the dead agent rendered `v=1`). */
function variables(v: string) {
  const variable = { Namespace: 'default', Path: 'nomad/jobs/web', Items: { v }, CreateIndex: 1, ModifyIndex: 2, CreateTime: 1, ModifyTime: 1 };
  return {
    get: (path: string) => (path === variable.Path ? variable : undefined),
    list: () => [variable],
    allowed: () => true,
    changes$: new Subject<unknown>().asObservable(),
  };
}

let dirs = 0;
/** A restored task: its dir holds what the dead agent rendered (`v=1`), the variable now says `v=2`. */
async function restoredTask(v = '2') {
  const taskDir = join(scratch, `t${dirs++}`);
  await mkdir(join(taskDir, 'local'), { recursive: true });
  await writeFile(join(taskDir, 'local', 'v'), 'v=1');
  const restarts: string[] = [];
  const hook = templateHook({
    task, namespace: 'default', variables: variables(v),
    lifecycle: { restart: (r) => restarts.push(r.reason), signal: () => undefined, emit: () => undefined },
  });
  const env = { NOMAD_TASK_DIR: join(taskDir, 'local') };
  const prestart = (previousState: unknown, running: boolean, signal = new AbortController().signal) =>
    hook.prestart!({ task, taskDir, env, previousState, resources: {}, running }, {}, signal);
  const poststart = (signal: AbortSignal, adopted?: boolean) => hook.poststart!({ task, env, ...(adopted !== undefined && { adopted }) }, signal);
  return { hook, taskDir, restarts, prestart, poststart, file: () => readFile(join(taskDir, 'local', 'v'), 'utf8') };
}

/** Waits (real time) for `ok`, or gives up after `ms`. */
async function eventually(ok: () => boolean, ms = 2_000): Promise<boolean> {
  const end = Date.now() + ms;
  while (!ok() && Date.now() < end) await new Promise((r) => setTimeout(r, 5));
  return ok();
}

const RENDERED = { rendered: 'true' };

describe('the template hook of a restored task', () => {
  it.each([
    { name: 'the re-run poststart is cut short mid-render by the restore: its rewrite is acted on by the prestart', cut: 'mid-render' },
    { name: 'the re-run poststart finishes its render first: its watch acts, the prestart keeps it', cut: 'after-render' },
    { name: 'no poststart re-run (restored from a step between the hooks): the prestart acts', cut: 'none' },
  ] as const)('$name', async ({ cut }) => {
    const t = await restoredTask();
    try {
      if (cut !== 'none') {
        const aborting = new AbortController();
        const post = t.poststart(aborting.signal);
        // The restore's RESTORED stops the call: at once (its render's write still in flight), or once it answered.
        if (cut === 'mid-render') aborting.abort();
        await post;
      }
      await t.prestart(RENDERED, true);
      expect(await t.file()).toBe('v=2');
      expect(await eventually(() => t.restarts.length > 0)).toBe(true);
      expect(t.restarts).toEqual(['Template with change_mode restart re-rendered']);
    } finally {
      await t.hook.stop!({ task, taskState: undefined as never }, new AbortController().signal);
    }
  });

  it('a task that never rendered (no state) renders without a restart', async () => {
    const t = await restoredTask();
    try {
      await t.prestart(undefined, false);
      expect(await t.file()).toBe('v=2');
      expect(await eventually(() => t.restarts.length > 0, 200)).toBe(false);
    } finally {
      await t.hook.stop!({ task, taskState: undefined as never }, new AbortController().signal);
    }
  });
});

const RESTART = 'Template with change_mode restart re-rendered';

describe('the template hook of a task restored after its prestart, before its start was saved', () => {
  it.each([
    { name: 'the start spawns the task: it has the new file, no restart', v: '2', adopted: false, restarts: [] },
    { name: 'the start finds the workload the dead agent spawned with the old file: restarted once', v: '2', adopted: true, restarts: [RESTART] },
    { name: 'the start finds that workload, but nothing changed while the agent was down: no restart', v: '1', adopted: true, restarts: [] },
    { name: 'a task whose driver says nothing of adoption: no restart', v: '2', adopted: undefined, restarts: [] },
  ])('$name', async ({ v, adopted, restarts }) => {
    const t = await restoredTask(v);
    try {
      await t.prestart(RENDERED, false);
      expect(await t.file()).toBe(`v=${v}`);
      await t.poststart(new AbortController().signal, adopted);
      expect(await eventually(() => t.restarts.length > 0, restarts.length > 0 ? 2_000 : 200)).toBe(restarts.length > 0);
      expect(t.restarts).toEqual(restarts);
    } finally {
      await t.hook.stop!({ task, taskState: undefined as never }, new AbortController().signal);
    }
  });

  it.each([
    { name: 'the re-run prestart is cut short mid-render by the rewind, then run again: the task starts with the new file', adopted: false, restarts: [] },
    { name: 'the same, and the start finds the old workload: the cut-short rewrite is acted on', adopted: true, restarts: [RESTART] },
  ])('$name', async ({ adopted, restarts }) => {
    const t = await restoredTask();
    try {
      const aborting = new AbortController();
      const first = t.prestart(RENDERED, false, aborting.signal);
      aborting.abort();
      await first;
      await t.prestart(RENDERED, false);
      expect(await t.file()).toBe('v=2');
      expect(t.restarts).toEqual([]);
      await t.poststart(new AbortController().signal, adopted);
      expect(await eventually(() => t.restarts.length > 0, restarts.length > 0 ? 2_000 : 200)).toBe(restarts.length > 0);
      expect(t.restarts).toEqual(restarts);
    } finally {
      await t.hook.stop!({ task, taskState: undefined as never }, new AbortController().signal);
    }
  });
});
