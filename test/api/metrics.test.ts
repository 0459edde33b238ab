/**
 * Issue 26, point 7: `GET /v1/metrics` in Nomad's JSON summary shape and as Prometheus text: allocations by
 * status, task restarts, API request latency by route, store commit latency, the agent's CPU and memory.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { call } from './agent-process.ts';
import { cleanUp, mockJob, runJob, serve, until } from './in-process-agent.ts';

afterEach(cleanUp);

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

describe('/v1/metrics', { timeout: 60_000 }, () => {
  it("answers Nomad's JSON summary: allocation gauges, request and commit latency samples, the process's figures", async () => {
    const s = await serve();
    await runJob(s, mockJob('m'));
    for (let i = 0; i < 3; i++) expect((await call(s.socket, 'GET', '/v1/jobs')).status).toBe(200);
    const res = await call(s.socket, 'GET', '/v1/metrics');
    expect(res.status).toBe(200);
    const m = res.json();
    expect(m.Timestamp).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d \+0000 UTC$/);
    const gauge = (name: string) => (m.Gauges as Json[]).find((g) => g.Name === name);
    expect(gauge('nomad.client.allocations.running')).toMatchObject({ Value: 1 });
    expect(gauge('nomad.client.allocations.pending')).toMatchObject({ Value: 0 });
    expect(gauge('process.resident.memory.bytes')!.Value).toBeGreaterThan(0);
    const jobs = (m.Samples as Json[]).find((x) => x.Name === 'nomad.http.request.duration.seconds' && x.Labels.route === '/v1/jobs' && x.Labels.method === 'GET');
    expect(jobs).toMatchObject({ Count: 3, Labels: { status: '200' } });
    expect(jobs!.Max).toBeGreaterThanOrEqual(jobs!.Min);
    expect(jobs!.Mean).toBeCloseTo(jobs!.Sum / 3);
    const commits = (m.Samples as Json[]).find((x) => x.Name === 'allocrun.store.commit.duration.seconds');
    expect(commits!.Count).toBeGreaterThanOrEqual(1);
    expect((m.Counters as Json[]).find((c) => c.Name === 'process.cpu.seconds.total')!.Sum).toBeGreaterThan(0);
  });

  it('answers Prometheus text with ?format=prometheus, task restarts included', async () => {
    const s = await serve();
    const alloc = await runJob(s, mockJob('p'));
    expect((await call(s.socket, 'POST', `/v1/client/allocation/${alloc.ID}/restart`)).status).toBe(200);
    const text = await until(async () => (await call(s.socket, 'GET', '/v1/metrics?format=prometheus')).text, (t) => t.includes(`alloc_id="${alloc.ID}"`) && /nomad_client_allocs_restarts\{[^}]*\} 1/.test(t) && /^nomad_client_allocations_running 1$/m.test(t), 'the restart to be counted and the task running again');
    expect(text).toMatch(/^nomad_http_request_duration_seconds_count\{method="POST",route="\/v1\/client\/allocation\/:id\/restart",status="200"\} 1$/m);
    expect(text).toMatch(/^process_resident_memory_bytes \d+/m);
    const res = await call(s.socket, 'GET', '/v1/metrics?format=prometheus');
    expect(res.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
  });

  it('refuses a format it does not answer, naming the ones it does', async () => {
    const s = await serve();
    const res = await call(s.socket, 'GET', '/v1/metrics?format=xml');
    expect([res.status, res.text]).toEqual([400, 'format "xml": this agent answers JSON (no format) or "prometheus"']);
  });
});
