/**
 * A task's automatic access to variables (Nomad's acl.go matchingVariablesCapabilitySet): in its own
 * namespace, exactly `nomad/jobs`, `nomad/jobs/<job>`, `nomad/jobs/<job>/<group>` and
 * `nomad/jobs/<job>/<group>/<task>`; nothing below them, nothing of a sibling, nothing elsewhere.
 */
import { describe, expect, it } from 'vitest';
import { implicitPaths, taskMayRead, type TaskClaim } from '../../src/variables/job-access.ts';

const web: TaskClaim = { namespace: 'default', job: 'web', group: 'frontend', task: 'server' };

const ROWS: [namespace: string, path: string, allowed: boolean][] = [
  ['default', 'nomad/jobs', true],
  ['default', 'nomad/jobs/web', true],
  ['default', 'nomad/jobs/web/frontend', true],
  ['default', 'nomad/jobs/web/frontend/server', true],
  // below the task's own path: not automatic
  ['default', 'nomad/jobs/web/frontend/server/extra', false],
  // a sibling task, a sibling group, another job, a job whose name starts the same
  ['default', 'nomad/jobs/web/frontend/sidecar', false],
  ['default', 'nomad/jobs/web/backend', false],
  ['default', 'nomad/jobs/api', false],
  ['default', 'nomad/jobs/webapp', false],
  ['default', 'nomad/jobs/web/frontendx', false],
  // outside nomad/jobs, and the parent directories
  ['default', 'nomad', false],
  ['default', 'app/config', false],
  ['default', 'nomad/jobs/', false],
  // the same paths in another namespace
  ['prod', 'nomad/jobs/web', false],
  ['prod', 'nomad/jobs', false],
];

describe("a task's implicit variable paths", () => {
  it.each(ROWS)('in %s, %s: %s', (namespace, path, allowed) => {
    expect(taskMayRead(web, namespace, path)).toBe(allowed);
  });

  it('lists the four paths broadest first', () => {
    expect(implicitPaths(web)).toEqual(['nomad/jobs', 'nomad/jobs/web', 'nomad/jobs/web/frontend', 'nomad/jobs/web/frontend/server']);
  });

  it('follows the claim: a task of another namespace reads its own paths there', () => {
    const prod: TaskClaim = { ...web, namespace: 'prod' };
    expect(taskMayRead(prod, 'prod', 'nomad/jobs/web/frontend')).toBe(true);
    expect(taskMayRead(prod, 'default', 'nomad/jobs/web/frontend')).toBe(false);
  });
});
