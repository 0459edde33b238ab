/**
 * `GET /v1/client/fs/logs/:id` on the agent's own mock driver (no test wrapper): the route reads through a
 * controller built only to read, so it must get what the running task wrote, answer without follow, and
 * with follow end once the task is dead.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { call, stream } from './agent-process.ts';
import { cleanUp, mockJob, runJob, serve, until, SUITE_TIMEOUT } from './in-process-agent.ts';

afterEach(cleanUp);

describe("the mock driver's logs through the API", { timeout: SUITE_TIMEOUT }, () => {
  it('answers without follow with the lines the task wrote, per stream', async () => {
    const s = await serve();
    const alloc = await runJob(s, mockJob('hello', { t: { run_for: '1h', stdout_string: 'hello', stderr_string: 'oops' } }));
    const out = await until(async () => (await call(s.socket, 'GET', `/v1/client/fs/logs/${alloc.ID}?task=t&type=stdout&plain=true`)).text, (t) => t.length > 0, 'the stdout line');
    expect(out).toBe('hello\n');
    expect((await call(s.socket, 'GET', `/v1/client/fs/logs/${alloc.ID}?task=t&type=stderr&plain=true`)).text).toBe('oops\n');
  });

  it('with follow, ends the stream when the task is dead', async () => {
    const s = await serve();
    const alloc = await runJob(s, mockJob('short', { t: { run_for: '2s', stdout_string: 'tick', stdout_repeat: 100, stdout_repeat_duration: '200ms' } }, { Type: 'batch' }));
    const followed = await stream(s.socket, `/v1/client/fs/logs/${alloc.ID}?task=t&type=stdout&follow=true&plain=true`);
    const text = await followed.ended;
    expect(text.startsWith('tick\n')).toBe(true);
    expect(text.replaceAll('tick\n', '')).toBe('');
  });
});
