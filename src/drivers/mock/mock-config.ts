/** Nomad's mock driver task config (drivers/mock), parsed and checked, with durations in ms. */
import { parseDuration } from '../../jobspec/duration.ts';

export interface MockTaskConfig {
  runFor: number;
  exitCode: number;
  exitSignal: number;
  exitErrMsg?: string;
  startError?: string;
  startErrorRecoverable: boolean;
  startBlockFor: number;
  /** How long the task takes to exit after the kill signal; absent means at once. */
  killAfter?: number;
  signalError?: string;
  stdoutString?: string;
  stdoutRepeat: number;
  stdoutRepeatDuration: number;
  stderrString?: string;
  stderrRepeat: number;
  stderrRepeatDuration: number;
}

/** A mock config key with a value of the wrong type or an unknown key; names the field. */
export class MockConfigError extends Error {
  readonly code = 'ErrDriverConfig';
  readonly recoverable = false;
  readonly eventType = 'Failed Validation';
  constructor(message: string) {
    super(message);
    this.name = 'MockConfigError';
  }
}

/** A value as it should appear in an error message; never throws (BigInt, cycles). */
function shown(v: unknown): string {
  try {
    return typeof v === 'bigint' ? `${v}n` : JSON.stringify(v) ?? String(v);
  } catch {
    return String(v);
  }
}

const KEYS = new Set([
  'run_for', 'exit_code', 'exit_signal', 'exit_err_msg', 'start_error', 'start_error_recoverable', 'start_block_for',
  'kill_after', 'signal_error', 'stdout_string', 'stdout_repeat', 'stdout_repeat_duration', 'stderr_string',
  'stderr_repeat', 'stderr_repeat_duration',
]);

/** Parses `task.config` for the mock driver; every problem is reported at once, each naming `config.<key>`. */
export function parseMockConfig(config: Record<string, unknown>): MockTaskConfig {
  const problems: string[] = [];
  for (const key of Object.keys(config)) if (!KEYS.has(key)) problems.push(`config.${key}: unknown mock driver option`);
  const duration = (key: string): number | undefined => {
    const v = config[key];
    if (v === undefined) return undefined;
    if (typeof v !== 'string' && typeof v !== 'number') {
      problems.push(`config.${key}: expected a duration like "10s", got ${shown(v)}`);
      return undefined;
    }
    try {
      return parseDuration(v);
    } catch (e) {
      problems.push(`config.${key}: ${(e as Error).message}`);
      return undefined;
    }
  };
  const int = (key: string): number | undefined => {
    const v = config[key];
    if (v === undefined) return undefined;
    if (typeof v !== 'number' || !Number.isInteger(v)) {
      problems.push(`config.${key}: expected an integer, got ${shown(v)}`);
      return undefined;
    }
    return v;
  };
  const str = (key: string): string | undefined => {
    const v = config[key];
    if (v === undefined) return undefined;
    if (typeof v !== 'string') {
      problems.push(`config.${key}: expected a string, got ${shown(v)}`);
      return undefined;
    }
    return v;
  };
  const bool = (key: string): boolean | undefined => {
    const v = config[key];
    if (v === undefined) return undefined;
    if (typeof v !== 'boolean') {
      problems.push(`config.${key}: expected true or false, got ${shown(v)}`);
      return undefined;
    }
    return v;
  };
  const parsed: MockTaskConfig = {
    runFor: duration('run_for') ?? 0,
    exitCode: int('exit_code') ?? 0,
    exitSignal: int('exit_signal') ?? 0,
    exitErrMsg: str('exit_err_msg'),
    startError: str('start_error'),
    startErrorRecoverable: bool('start_error_recoverable') ?? false,
    startBlockFor: duration('start_block_for') ?? 0,
    killAfter: duration('kill_after'),
    signalError: str('signal_error'),
    stdoutString: str('stdout_string'),
    stdoutRepeat: int('stdout_repeat') ?? 0,
    stdoutRepeatDuration: duration('stdout_repeat_duration') ?? 0,
    stderrString: str('stderr_string'),
    stderrRepeat: int('stderr_repeat') ?? 0,
    stderrRepeatDuration: duration('stderr_repeat_duration') ?? 0,
  };
  if (problems.length > 0) throw new MockConfigError(`invalid mock driver config: ${problems.join('; ')}`);
  return parsed;
}
