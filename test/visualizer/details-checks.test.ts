/**
 * The details view's Checks table (visualizer/src/details-view.ts) and the CHECK_STATUS rows of the
 * timeline, from a real alloc runner's inspection stream: its checks hook reports a check going pending →
 * success → failure, the page model is rebuilt from the messages as JSON (as the page gets them), and the
 * view's HTML is read without a DOM (the view only sets `innerHTML`).
 */
import { describe, expect, it } from 'vitest';
import type { CheckOutcome } from '../../src/checks/check-status.ts';
import type { RawResult } from '../../src/checks/checker.ts';
import type { CheckSpec, ServiceSpec } from '../../src/checks/spec.ts';
import type { AllocSpec, TaskSpec } from '../../src/jobspec/types.ts';
import { createInspectionStream } from '../../src/inspect/inspection-stream.ts';
import type { InspectMessage } from '../../src/inspect/protocol.ts';
import { createAllocRunner } from '../../src/runtime/create-alloc-runner.ts';
import { SimulatedClock } from '../../src/testing/simulated-clock.ts';
import { createMockDriver } from '../../src/drivers/mock/mock-driver.ts';
import { createDetailsView, checksTableHtml } from '../../visualizer/src/details-view.ts';
import { Model } from '../../visualizer/src/model.ts';
import { TEST_NODE } from '../properties/world.ts';

const check = (name: string, extra: Partial<CheckSpec> = {}): CheckSpec => ({
  name,
  type: 'http',
  path: '/health',
  interval: 10_000,
  timeout: 2_000,
  successBeforePassing: 0,
  failuresBeforeCritical: 0,
  onUpdate: 'require_healthy',
  ...extra,
});
const service = (name: string, checks: CheckSpec[]): ServiceSpec => ({ name, provider: 'nomad', port: 'http', addressMode: 'auto', onUpdate: 'require_healthy', checks });
const task = (name: string, services?: ServiceSpec[]): TaskSpec => ({ name, driver: 'mock', config: { run_for: '10h' }, killTimeout: 1_000, ...(services && { services }) }) as TaskSpec;
const spec = {
  id: 'viz1',
  job: 'web',
  group: 'app',
  type: 'service',
  tasks: [task('server', [service('web', [check('alive')])])],
  services: [service('front', [check('ready', { path: '/ready' })])],
  ports: [{ label: 'http', value: 23456, to: 0, hostIP: '127.0.0.1' }],
  restart: { attempts: 5, interval: 3_600_000, delay: 1_000, mode: 'fail' },
} as AllocSpec;

/** A fake element: the view only writes `innerHTML`. */
const fakeEl = () => ({ innerHTML: '' }) as HTMLElement;

/** The rows of the Checks table in `html`: [check, task, status, output] per row. */
function checkRows(html: string): string[][] {
  const table = /<table class="checks">(.*?)<\/table>/.exec(html)?.[1];
  if (!table) return [];
  return [...table.matchAll(/<tr data-check="[^"]*"[^>]*>(.*?)<\/tr>/g)].map((m) => [...m[1]!.matchAll(/<td[^>]*>(.*?)<\/td>/g)].map((c) => c[1]!));
}

describe('the Checks table in the details view', () => {
  it('shows each check of the selected allocation from its actor context, and CHECK_STATUS in the timeline', async () => {
    const clock = new SimulatedClock(0);
    const messages: InspectMessage[] = [];
    const stream = createInspectionStream({ now: () => clock.now(), schedule: (fn) => queueMicrotask(fn) });
    stream.subscribe((b) => messages.push(...b));
    const outcome: { web: CheckOutcome } = { web: 'success' };
    const runCheck = async (q: { path?: string }): Promise<RawResult> =>
      q.path === '/ready' || outcome.web === 'success' ? { outcome: 'success', output: 'nomad: http ok', statusCode: 200 } : { outcome: 'failure', output: 'nomad: <connection refused>' };
    const runner = createAllocRunner(spec, { clock, builtinHooks: false, node: TEST_NODE, hostEnv: {}, seed: 1, checks: { runCheck: runCheck as never }, drivers: { mock: createMockDriver() }, inspect: stream.inspect }).start();
    await clock.advance(6_000);
    outcome.web = 'failure';
    await clock.advance(10_000);
    stream.flush();

    const model = new Model();
    model.apply(JSON.parse(JSON.stringify(messages)) as InspectMessage[]);
    const root = model.roots[0]!;
    expect(model.actors.get(root)!.id).toBe('viz1');
    const el = fakeEl();
    const details = createDetailsView(el, () => undefined);
    details.render(model, root, undefined);
    // Group services first, then by task; the output escaped.
    expect(checkRows(el.innerHTML)).toEqual([
      ['front / ready', 'group', 'success', 'nomad: http ok'],
      ['web / alive', 'server', 'failure', 'nomad: &#60;connection refused&#62;'],
    ]);
    expect(el.innerHTML).toContain('<h3>checks</h3>');

    // The timeline has the reports as events to the alloc, with their payload: pending, success, then failure for "alive".
    const reports = model.timeline.filter((e) => e.kind === 'event' && e.type === 'CHECK_STATUS' && e.target === root);
    const said = reports.map((e) => (e.kind === 'event' ? (e.payload as { check: { name: string; status: string } }).check : undefined)).filter((c) => c!.name === 'alive').map((c) => c!.status);
    expect(said).toEqual(['pending', 'success', 'failure']);
    expect(reports.every((e) => e.kind === 'event' && !e.internal)).toBe(true);

    // Travelling to the moment before the failure shows the table as it was then.
    const failed = reports.find((e) => e.kind === 'event' && (e.payload as { check: { status: string } }).check.status === 'failure')!;
    const past = model.at(failed.seq - 1);
    const then = fakeEl();
    createDetailsView(then, () => undefined).render(past, root, undefined);
    expect(checkRows(then.innerHTML).find((r) => r[0] === 'web / alive')![2]).toBe('success');

    // A task actor gets no table (its checks are its allocation's).
    const server = [...model.actors.values()].find((a) => a.id === 'server' && a.parentSessionId === root)!;
    const taskEl = fakeEl();
    createDetailsView(taskEl, () => undefined).render(model, server.sessionId, undefined);
    expect(taskEl.innerHTML).not.toContain('class="checks"');
    runner.stop();
  });

  it('renders nothing for an allocation without checks', () => {
    expect(checksTableHtml([], undefined)).toBe('');
  });
});
