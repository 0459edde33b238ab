/**
 * The built-in drivers' config rules as the job loader takes them (src/jobspec/driver-config.ts): the very
 * parsers the drivers run at start, so `allocrun validate`, the API and registration refuse what raw_exec
 * or mock would refuse, naming the field, before anything runs. raw_exec also judges the task's `user`:
 * refused when the agent cannot switch users (not root) or the user does not exist (task-user.ts).
 */
import { fieldPath, type DriverChecks, type DriverConfigProblem, type DriverTaskFields } from '../jobspec/driver-config.ts';
import type { TaskSpec } from '../jobspec/types.ts';
import { MockConfigError, parseMockConfig } from './mock/mock-config.ts';
import { parseRawExecConfig } from './raw-exec/config.ts';
import { RawExecConfigError } from './raw-exec/errors.ts';
import { taskUserProblem } from './raw-exec/task-user.ts';

function rawExec(config: Record<string, unknown>, task: string, fields: DriverTaskFields = {}): DriverConfigProblem[] {
  const problems: DriverConfigProblem[] = [];
  try {
    parseRawExecConfig({ name: task, driver: 'raw_exec', config } as TaskSpec);
  } catch (err) {
    if (!(err instanceof RawExecConfigError)) throw err;
    problems.push({ path: fieldPath(err.path), message: err.problem });
  }
  // Asked at each check, not once: the process-wide UserSwitching (task-user.ts) answers, as the driver will.
  const why = typeof fields.user === 'string' ? taskUserProblem(fields.user) : undefined;
  if (why) problems.push({ path: ['user'], message: why });
  return problems;
}

function mock(config: Record<string, unknown>): DriverConfigProblem[] {
  try {
    parseMockConfig(config);
    return [];
  } catch (err) {
    if (!(err instanceof MockConfigError)) throw err;
    return err.problems.map((p) => ({ path: ['config', ...fieldPath(p.field)], message: p.message }));
  }
}

/** The drivers every runtime has by default (raw_exec, mock), with their config checks. */
export const BUILTIN_DRIVER_CHECKS: DriverChecks = Object.freeze({ raw_exec: rawExec, mock });
