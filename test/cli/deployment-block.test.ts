/**
 * Nomad's deployment block (`formatDeployment` / `formatDeploymentGroups` in command/deployment_status.go), as
 * `deployment status`, `job run`'s monitor and `job status`'s Latest Deployment print it: the Progress Deadline column
 * (each group's RequireProgressBy in local time, N/A while it is not set) appears when any group's progress_deadline
 * is not 0.
 */
import { describe, expect, it } from 'vitest';
import { deploymentBlock, latestDeploymentSection, type ApiDeployment } from '../../src/cli/deployment-monitor.ts';
import { formatTime } from '../../src/cli/format.ts';

const BY = '2026-11-27T10:15:00.000Z';
const deployment = (groups: Record<string, Partial<ApiDeployment['TaskGroups'][string]>>): ApiDeployment => ({
  ID: '0123abcd-0000-4000-8000-000000000000', JobID: 'web', JobVersion: 3, Status: 'running', StatusDescription: 'Deployment is running',
  TaskGroups: Object.fromEntries(Object.entries(groups).map(([n, g]) => [n, { DesiredTotal: 2, PlacedAllocs: 1, HealthyAllocs: 0, UnhealthyAllocs: 0, ...g }])),
});
const table = (lines: string[]) => lines.slice(lines.indexOf('Deployed') + 1).map((l) => l.trimEnd().split(/ {2,}/));

describe('the Deployed table\'s Progress Deadline column', () => {
  it.each<[string, ApiDeployment, string[][]]>([
    ['each group\'s RequireProgressBy in local time, N/A for a group without one', deployment({ api: { ProgressDeadline: 600e9, RequireProgressBy: BY }, web: { ProgressDeadline: 600e9, RequireProgressBy: '0001-01-01T00:00:00Z' } }), [
      ['Task Group', 'Desired', 'Placed', 'Healthy', 'Unhealthy', 'Progress Deadline'],
      ['api', '2', '1', '0', '0', formatTime(Date.parse(BY))],
      ['web', '2', '1', '0', '0', 'N/A'],
    ]],
    ['shown when any group has a deadline', deployment({ api: { ProgressDeadline: 0, RequireProgressBy: '0001-01-01T00:00:00Z' }, web: { ProgressDeadline: 60e9, RequireProgressBy: BY } }), [
      ['Task Group', 'Desired', 'Placed', 'Healthy', 'Unhealthy', 'Progress Deadline'],
      ['api', '2', '1', '0', '0', 'N/A'],
      ['web', '2', '1', '0', '0', formatTime(Date.parse(BY))],
    ]],
    ['left out when no group has one (progress_deadline = 0)', deployment({ api: { ProgressDeadline: 0, RequireProgressBy: '0001-01-01T00:00:00Z' } }), [
      ['Task Group', 'Desired', 'Placed', 'Healthy', 'Unhealthy'],
      ['api', '2', '1', '0', '0'],
    ]],
  ])('%s', (_what, d, rows) => {
    expect(table(deploymentBlock(d))).toEqual(rows);
    expect(table(latestDeploymentSection(d))).toEqual(rows);
  });
});
