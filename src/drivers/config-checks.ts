/**
 * The built-in drivers' config rules as the job loader takes them (src/jobspec/driver-config.ts): the very
 * parsers the drivers run at start, so `allocrun validate`, the API and registration refuse what raw_exec
 * or mock would refuse, naming the field, before anything runs.
 */
import { fieldPath, type DriverChecks, type DriverConfigProblem } from '../jobspec/driver-config.ts';
import type { TaskSpec } from '../jobspec/types.ts';
import { MockConfigError, parseMockConfig } from './mock/mock-config.ts';
import { parseRawExecConfig } from './raw-exec/config.ts';
import { RawExecConfigError } from './raw-exec/errors.ts';

function rawExec(config: Record<string, unknown>, task: string): DriverConfigProblem[] {
  try {
    parseRawExecConfig({ name: task, driver: 'raw_exec', config } as TaskSpec);
    return [];
  } catch (err) {
    if (!(err instanceof RawExecConfigError)) throw err;
    return [{ path: fieldPath(err.path), message: err.problem }];
  }
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
