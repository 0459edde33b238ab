import { describe, expect, it } from 'vitest';
import { Subject, of } from 'rxjs';
import type { LogLine } from '../../src/drivers/controller.ts';
import {
  createConfigsManager,
  createSecretsManager,
  isControllerLogs,
  logPublisherFunc,
  publishLogs,
  type LogMessage,
} from '../../src/drivers/executor.ts';
import { StubController } from '../../src/testing/stub-controller.ts';

describe('in-memory secrets and configs managers', () => {
  it('gets what was added and nothing for an unknown id', () => {
    const secrets = createSecretsManager();
    secrets.add({ id: 's1', name: 'db-password', data: 'hunter2' }, { id: 's2', name: 'api-key', data: 'k' });
    expect(secrets.get('s1')).toEqual({ id: 's1', name: 'db-password', data: 'hunter2' });
    expect(secrets.get('nope')).toBeUndefined();
  });

  it('removes only the ids it is given', () => {
    const configs = createConfigsManager();
    configs.add({ id: 'c1', name: 'nginx.conf', data: '' }, { id: 'c2', name: 'app.yaml', data: '' });
    configs.remove(['c1', 'unknown']);
    expect(configs.get('c1')).toBeUndefined();
    expect(configs.get('c2')?.name).toBe('app.yaml');
  });

  it('reset forgets everything, as a full assignment requires', () => {
    const secrets = createSecretsManager();
    secrets.add({ id: 's1', name: 'a', data: 'x' });
    secrets.reset();
    expect(secrets.get('s1')).toBeUndefined();
  });

  it('add replaces a secret with the same id', () => {
    const secrets = createSecretsManager();
    secrets.add({ id: 's1', name: 'a', data: 'old' });
    secrets.add({ id: 's1', name: 'a', data: 'new' });
    expect(secrets.get('s1')?.data).toBe('new');
  });
});

describe('log publishing', () => {
  const line = (text: string, time: number): LogLine => ({ stream: 'stdout', line: text, time });

  it('logPublisherFunc adapts a function to a publisher', async () => {
    const got: LogMessage[] = [];
    const publisher = logPublisherFunc((m) => void got.push(m));
    await publisher.publish({ taskId: 't1', ...line('hello', 1) });
    expect(got).toEqual([{ taskId: 't1', stream: 'stdout', line: 'hello', time: 1 }]);
  });

  it('publishes every line of a finite stream in order, tagged with the task id', async () => {
    const got: string[] = [];
    // `of` completes during subscribe, before publishLogs holds the subscription.
    const ctlr = Object.assign(new StubController(), { logs: () => of(line('a', 1), line('b', 2)) });
    await publishLogs(ctlr, 't1', logPublisherFunc((m) => void got.push(`${m.taskId}:${m.line}`)), {}, new AbortController().signal);
    expect(got).toEqual(['t1:a', 't1:b']);
  });

  it('streams until the signal aborts', async () => {
    const lines = new Subject<LogLine>();
    const ctlr = Object.assign(new StubController(), { logs: () => lines.asObservable() });
    const ac = new AbortController();
    const got: string[] = [];
    const done = publishLogs(ctlr, 't1', logPublisherFunc((m) => void got.push(m.line)), { follow: true }, ac.signal);
    lines.next(line('first', 1));
    ac.abort();
    lines.next(line('after abort', 2));
    await done;
    expect(got).toEqual(['first']);
    expect(lines.observed).toBe(false);
  });

  it('a controller without logs publishes nothing', async () => {
    const ctlr = new StubController();
    expect(isControllerLogs(ctlr)).toBe(false);
    await expect(publishLogs(ctlr, 't1', logPublisherFunc(() => {}), {}, new AbortController().signal)).resolves.toBeUndefined();
  });
});
