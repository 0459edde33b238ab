/**
 * What the job routes (src/api/routes/jobs.ts) refuse before they act, and how they join many problems or
 * warnings, through a served agent in process: every body and query is checked by its schema, with a 400
 * naming the field, never a crash deeper in.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { call } from './agent-process.ts';
import { cleanUp, mockJob, serve, SUITE_TIMEOUT } from './in-process-agent.ts';

afterEach(cleanUp);

describe('job routes check their input', { timeout: SUITE_TIMEOUT }, () => {
  it.each([
    ['PUT', '/v1/jobs', { Jb: {} }, 'Job'],
    ['POST', '/v1/jobs', { Jb: {} }, 'Job'],
    ['PUT', '/v1/job/web', { Jb: {} }, 'Job'],
    ['PUT', '/v1/validate/job', { Jb: {} }, 'Job'],
    ['POST', '/v1/jobs/parse', { Canonicalize: true }, 'JobHCL'],
  ])('%s %s refuses a body without its field with 400 naming it', async (method, path, body, field) => {
    const s = await serve();
    const res = await call(s.socket, method, path, body);
    expect([res.status, res.text]).toEqual([400, expect.stringContaining(field)]);
  });

  it.each(['/v1/jobs', '/v1/job/web', '/v1/job/web/allocations', '/v1/job/web/summary', '/v1/job/web/versions'])('GET %s refuses a wait Go would not parse with 400 naming wait', async (path) => {
    const s = await serve();
    await call(s.socket, 'PUT', '/v1/jobs', mockJob('web'));
    const res = await call(s.socket, 'GET', `${path}?index=1&wait=soon`);
    expect([res.status, res.text]).toEqual([400, expect.stringContaining('wait')]);
  });

  it('answers every warning of a job, one a line, each naming its field', async () => {
    const s = await serve();
    const body = mockJob('warned');
    Object.assign(body.Job.TaskGroups[0]!, { Spreads: [{ Attribute: '${node.datacenter}', Weight: 50 }], Affinities: [{ LTarget: '${node.class}', RTarget: 'x', Operand: '=', Weight: 50 }] });
    const res = await call(s.socket, 'PUT', '/v1/jobs', body);
    expect(res.status, res.text).toBe(200);
    const lines = (res.json().Warnings as string).split('\n');
    expect(lines).toHaveLength(2);
    expect(lines.some((l) => /spread/i.test(l))).toBe(true);
    expect(lines.some((l) => /affinit/i.test(l))).toBe(true);
  });

  it('refuses a job file with two problems, one a line, each at its line', async () => {
    const s = await serve();
    const hcl = 'job "x" {\n  group "g" {\n    task "a" {\n      driver = "nosuch"\n    }\n    task "b" {\n      driver = "other"\n    }\n  }\n}\n';
    const res = await call(s.socket, 'POST', '/v1/jobs/parse', { JobHCL: hcl });
    expect(res.status).toBe(400);
    const lines = res.text.split('\n');
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(/^4:\d+: .*nosuch/);
    expect(lines[1]).toMatch(/^7:\d+: .*other/);
  });

  it('keeps each job\'s allocation list apart: two jobs whose allocations share an index', async () => {
    const s = await serve();
    await call(s.socket, 'PUT', '/v1/jobs', { Job: { ...mockJob('a').Job, TaskGroups: [{ ...mockJob('a').Job.TaskGroups[0]!, Count: 0 }] } });
    await call(s.socket, 'PUT', '/v1/jobs', { Job: { ...mockJob('b').Job, TaskGroups: [{ ...mockJob('b').Job.TaskGroups[0]!, Count: 0 }] } });
    expect((await call(s.socket, 'GET', '/v1/job/a/allocations')).json()).toEqual([]);
    await call(s.socket, 'PUT', '/v1/jobs', mockJob('c'));
    const c = (await call(s.socket, 'GET', '/v1/job/c/allocations')).json<{ JobID: string }[]>();
    expect(c.map((x) => x.JobID)).toEqual(['c']);
    expect((await call(s.socket, 'GET', '/v1/job/b/allocations')).json()).toEqual([]);
  });
});
