/**
 * Issue 26, point 9: Nomad's list query options. go-bexpr filter expressions, parsed and evaluated (a table
 * of expressions against one object, and the errors that name what is wrong), then filter, reverse,
 * per_page / next_token, namespace and region on the agent's lists over HTTP.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { evaluateFilter, FilterError, parseFilter } from '../../src/api/bexpr.ts';
import { call, waitForAllocs } from './agent-process.ts';
import { cleanUp, mockJob, serve } from './in-process-agent.ts';

afterEach(cleanUp);

const job = {
  ID: 'web', Status: 'running', Priority: 50, Stop: false, Datacenters: ['dc1', 'dc2'], Meta: { tag: 'blue', 'team.name': 'core' },
  TaskStates: { app: { State: 'running', Restarts: 2 } }, Empty: '', None: [], ParentID: '',
};

describe('go-bexpr filters', () => {
  it.each([
    ['Status == "running"', true],
    ['Status == running', true],
    ['Status != "running"', false],
    ['Priority == 50', true],
    ['Priority == "50"', true],
    ['Priority != 51', true],
    ['Stop == false', true],
    ['Stop == true', false],
    ['Meta.tag == "blue"', true],
    ['Meta["team.name"] == "core"', true],
    ['Meta.nope == "x"', false],
    ['Meta.nope != "x"', true],
    ['TaskStates.app.Restarts == 2', true],
    ['"dc2" in Datacenters', true],
    ['"dc3" not in Datacenters', true],
    ['Datacenters contains "dc1"', true],
    ['Datacenters not contains "dc1"', false],
    ['"tag" in Meta', true],
    ['ID contains "e"', true],
    ['ID matches "^w.b$"', true],
    ['ID not matches "^x"', true],
    ['ID matches `^W`', false],
    ['Empty is empty', true],
    ['None is empty', true],
    ['Missing is empty', true],
    ['Datacenters is not empty', true],
    ['Status == "running" and Priority == 50', true],
    ['Status == "dead" or Priority == 50', true],
    ['Status == "dead" or Priority == 49 and Stop == false', false],
    ['(Status == "dead" or Priority == 50) and Stop == false', true],
    ['not Status == "dead"', true],
    ['not (Status == "running" and Stop == false)', false],
  ])('%s → %s', (expr, expected) => {
    expect(evaluateFilter(parseFilter(expr), job)).toBe(expected);
  });

  it.each([
    ['', 'the filter is empty'],
    ['Status ==', 'expected a value at the end'],
    ['Status = "x"', 'unexpected "=" at character 8'],
    ['Status == "x', 'unterminated string starting at character 11'],
    ['Status is full', 'expected "empty" at character 11'],
    ['(Status == "x"', 'expected ")" at the end'],
    ['Status == "x" Priority', 'unexpected "Priority" at character 15'],
    ['ID matches "("', '"(" is not a regular expression'],
    ['Status likes "x"', 'expected ==, !=, is, contains or matches after Status at character 8'],
  ])('refuses %j: %s', (expr, message) => {
    expect(() => parseFilter(expr)).toThrow(FilterError);
    expect(() => parseFilter(expr)).toThrow(message);
  });
});

describe('list query options over HTTP', { timeout: 60_000 }, () => {
  const setup = async () => {
    const s = await serve();
    for (const [id, tag, ns] of [['a', 'blue', 'default'], ['b', 'green', 'default'], ['c', 'blue', 'ops']] as const) {
      expect((await call(s.socket, 'PUT', '/v1/jobs', mockJob(id, undefined, { Meta: { tag }, Namespace: ns }))).status).toBe(200);
    }
    await waitForAllocs(s.socket, '/v1/allocations', (l) => l.length === 3 && l.every((a) => a.ClientStatus === 'running'));
    return s;
  };
  const ids = (list: { ID: string }[]) => list.map((x) => x.ID);

  it('filters, orders, pages and scopes lists', async () => {
    const s = await setup();
    expect(ids((await call(s.socket, 'GET', `/v1/jobs?filter=${encodeURIComponent('Name != "b"')}`)).json())).toEqual(['a', 'c']);
    expect(ids((await call(s.socket, 'GET', `/v1/allocations?filter=${encodeURIComponent('JobID != "c" and ClientStatus == running')}`)).json()).sort()).toHaveLength(2);
    expect(ids((await call(s.socket, 'GET', '/v1/jobs?namespace=ops')).json())).toEqual(['c']);
    expect(ids((await call(s.socket, 'GET', '/v1/jobs?namespace=*')).json())).toEqual(['a', 'b', 'c']);
    expect(ids((await call(s.socket, 'GET', '/v1/jobs?reverse=true')).json())).toEqual(['c', 'b', 'a']);

    const first = await call(s.socket, 'GET', '/v1/jobs?per_page=2');
    expect(ids(first.json())).toEqual(['a', 'b']);
    expect(first.headers['x-nomad-nexttoken']).toBe('c');
    const second = await call(s.socket, 'GET', '/v1/jobs?per_page=2&next_token=c');
    expect(ids(second.json())).toEqual(['c']);
    expect(second.headers['x-nomad-nexttoken']).toBeUndefined();
  });

  it('refuses a bad filter, per_page or region, naming it', async () => {
    const s = await serve();
    const bad = await call(s.socket, 'GET', `/v1/jobs?filter=${encodeURIComponent('Name ==')}`);
    expect([bad.status, bad.text]).toEqual([400, 'failed to read filter expression: expected a value at the end']);
    const page = await call(s.socket, 'GET', '/v1/jobs?per_page=0');
    expect([page.status, page.text]).toEqual([400, 'per_page: expected a positive integer, got "0"']);
    const region = await call(s.socket, 'GET', '/v1/jobs?region=eu');
    expect([region.status, region.text]).toEqual([400, 'No path to region "eu": this agent is the one server of region "global"']);
    expect((await call(s.socket, 'GET', '/v1/jobs?region=global')).status).toBe(200);
  });
});
