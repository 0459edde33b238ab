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
  /** The DriverNetwork the started task reports (`driver_ip`, `driver_advertise`, `driver_port_map`). */
  driverIp?: string;
  driverAdvertise: boolean;
  /** From `driver_port_map = "http:80,db:5432"`. */
  driverPortMap?: Record<string, number>;
  /** What an exec into the task returns (`exec_command { run_for, exit_code, stdout_string }`). */
  execCommand?: { runFor: number; exitCode: number; stdoutString: string };
}

/** A mock config key with a value of the wrong type or an unknown key; names the field. */
export class MockConfigError extends Error {
  readonly code = 'ErrDriverConfig';
  readonly recoverable = false;
  readonly eventType = 'Failed Validation';
  constructor(
    message: string,
    /** Every problem: the field under `config` (`exec_command.exit_code`) and what is wrong with it. */
    readonly problems: readonly { field: string; message: string }[] = [],
  ) {
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
  'stderr_repeat', 'stderr_repeat_duration', 'driver_ip', 'driver_advertise', 'driver_port_map', 'exec_command',
]);
const EXEC_KEYS = new Set(['run_for', 'exit_code', 'stdout_string']);

/** Parses `task.config` for the mock driver; every problem is reported at once, each naming `config.<key>`. */
export function parseMockConfig(config: Record<string, unknown>): MockTaskConfig {
  const problems: { field: string; message: string }[] = [];
  const problem = (field: string, message: string): void => void problems.push({ field, message });
  for (const key of Object.keys(config)) if (!KEYS.has(key)) problem(key, 'unknown mock driver option');
  const duration = (key: string): number | undefined => (config[key] === undefined ? undefined : durationValue(config[key], key));
  const int = (key: string): number | undefined => {
    const v = config[key];
    if (v === undefined) return undefined;
    if (typeof v !== 'number' || !Number.isInteger(v)) {
      problem(key, `expected an integer, got ${shown(v)}`);
      return undefined;
    }
    return v;
  };
  const str = (key: string): string | undefined => {
    const v = config[key];
    if (v === undefined) return undefined;
    if (typeof v !== 'string') {
      problem(key, `expected a string, got ${shown(v)}`);
      return undefined;
    }
    return v;
  };
  const bool = (key: string): boolean | undefined => {
    const v = config[key];
    if (v === undefined) return undefined;
    if (typeof v !== 'boolean') {
      problem(key, `expected true or false, got ${shown(v)}`);
      return undefined;
    }
    return v;
  };
  function portMap(text: string | undefined): Record<string, number> | undefined {
    if (text === undefined) return undefined;
    const map: Record<string, number> = {};
    for (const part of text.split(',').map((p) => p.trim()).filter(Boolean)) {
      const m = /^([A-Za-z0-9_-]+):(\d{1,5})$/.exec(part);
      if (!m || Number(m[2]) > 65535) {
        problem('driver_port_map', `expected "label:port" pairs separated by commas, got ${shown(part)}`);
        continue;
      }
      map[m[1]!] = Number(m[2]);
    }
    return map;
  }
  function execCommand(v: unknown): MockTaskConfig['execCommand'] {
    if (v === undefined) return undefined;
    if (typeof v !== 'object' || v === null || Array.isArray(v)) {
      problem('exec_command', `expected a block with run_for, exit_code and stdout_string, got ${shown(v)}`);
      return undefined;
    }
    const block = v as Record<string, unknown>;
    for (const key of Object.keys(block)) if (!EXEC_KEYS.has(key)) problem(`exec_command.${key}`, 'unknown mock driver option');
    const runFor = block['run_for'] === undefined ? 0 : durationValue(block['run_for'], 'exec_command.run_for');
    const exitCode = block['exit_code'] ?? 0;
    const stdout = block['stdout_string'] ?? '';
    if (typeof exitCode !== 'number' || !Number.isInteger(exitCode)) problem('exec_command.exit_code', `expected an integer, got ${shown(exitCode)}`);
    if (typeof stdout !== 'string') problem('exec_command.stdout_string', `expected a string, got ${shown(stdout)}`);
    return { runFor: runFor ?? 0, exitCode: Number(exitCode), stdoutString: String(stdout) };
  }
  function durationValue(v: unknown, key: string): number | undefined {
    if (typeof v !== 'string' && typeof v !== 'number') {
      problem(key, `expected a duration like "10s", got ${shown(v)}`);
      return undefined;
    }
    try {
      return parseDuration(v);
    } catch (e) {
      problem(key, (e as Error).message);
      return undefined;
    }
  }
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
    driverIp: str('driver_ip'),
    driverAdvertise: bool('driver_advertise') ?? false,
    driverPortMap: portMap(str('driver_port_map')),
    execCommand: execCommand(config['exec_command']),
  };
  if (problems.length > 0) throw new MockConfigError(`invalid mock driver config: ${problems.map((p) => `config.${p.field}: ${p.message}`).join('; ')}`, problems);
  return parsed;
}
