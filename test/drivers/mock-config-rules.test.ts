/**
 * The mock driver's config (Nomad's drivers/mock options), key by key: what each option parses to, its
 * default, and the problem each wrong value is reported as, at its field and all at once.
 */
import { describe, expect, it } from 'vitest';
import { MockConfigError, parseMockConfig } from '../../src/drivers/mock/mock-config.ts';

/** Every option left out: Nomad's mock defaults (a task that exits 0 at once, no output, no network). */
const DEFAULTS = {
  runFor: 0,
  exitCode: 0,
  exitSignal: 0,
  startErrorRecoverable: false,
  startBlockFor: 0,
  stdoutRepeat: 0,
  stdoutRepeatDuration: 0,
  stderrRepeat: 0,
  stderrRepeatDuration: 0,
  driverAdvertise: false,
};

/** The problems a config is refused with, or the error if it is not a MockConfigError. */
function problemsOf(config: Record<string, unknown>): { field: string; message: string }[] {
  try {
    parseMockConfig(config);
  } catch (e) {
    if (e instanceof MockConfigError) return [...e.problems];
    throw e;
  }
  throw new Error('accepted');
}

describe('mock config: each option parses to its field', () => {
  it('an empty config takes every default and nothing else', () => {
    expect(parseMockConfig({})).toStrictEqual({
      ...DEFAULTS,
      exitErrMsg: undefined,
      startError: undefined,
      killAfter: undefined,
      signalError: undefined,
      stdoutString: undefined,
      stderrString: undefined,
      driverIp: undefined,
      driverPortMap: undefined,
      execCommand: undefined,
    });
  });

  it.each<[string, Record<string, unknown>, Record<string, unknown>]>([
    ['run_for, a Go duration', { run_for: '1m30s' }, { runFor: 90_000 }],
    ['run_for, milliseconds', { run_for: 250 }, { runFor: 250 }],
    ['exit_code', { exit_code: 3 }, { exitCode: 3 }],
    ['exit_signal', { exit_signal: 9 }, { exitSignal: 9 }],
    ['exit_err_msg', { exit_err_msg: 'boom' }, { exitErrMsg: 'boom' }],
    ['start_error', { start_error: 'no start' }, { startError: 'no start' }],
    ['start_error_recoverable', { start_error_recoverable: true }, { startErrorRecoverable: true }],
    ['start_block_for', { start_block_for: '2s' }, { startBlockFor: 2_000 }],
    ['kill_after', { kill_after: '5s' }, { killAfter: 5_000 }],
    ['kill_after of zero is given, not absent', { kill_after: 0 }, { killAfter: 0 }],
    ['signal_error', { signal_error: 'nope' }, { signalError: 'nope' }],
    ['stdout_string', { stdout_string: 'hi' }, { stdoutString: 'hi' }],
    ['stdout_repeat', { stdout_repeat: 4 }, { stdoutRepeat: 4 }],
    ['stdout_repeat_duration', { stdout_repeat_duration: '1s' }, { stdoutRepeatDuration: 1_000 }],
    ['stderr_string', { stderr_string: 'err' }, { stderrString: 'err' }],
    ['stderr_repeat', { stderr_repeat: 2 }, { stderrRepeat: 2 }],
    ['stderr_repeat_duration', { stderr_repeat_duration: '3s' }, { stderrRepeatDuration: 3_000 }],
    ['driver_ip', { driver_ip: '10.0.0.1' }, { driverIp: '10.0.0.1' }],
    ['driver_advertise', { driver_advertise: true }, { driverAdvertise: true }],
    ['driver_port_map', { driver_port_map: 'http:80,db:5432' }, { driverPortMap: { http: 80, db: 5432 } }],
    ['driver_port_map, spaces and empty pairs left out', { driver_port_map: ' http:80 , ,db:5432,' }, { driverPortMap: { http: 80, db: 5432 } }],
    ['driver_port_map, every label character and the top port', { driver_port_map: 'Web_1-a:65535' }, { driverPortMap: { 'Web_1-a': 65535 } }],
    ['driver_port_map, empty', { driver_port_map: '' }, { driverPortMap: {} }],
    ['exec_command, every default', { exec_command: {} }, { execCommand: { runFor: 0, exitCode: 0, stdoutString: '' } }],
    ['exec_command, every field', { exec_command: { run_for: '2s', exit_code: 7, stdout_string: 'out' } }, { execCommand: { runFor: 2_000, exitCode: 7, stdoutString: 'out' } }],
  ])('%s', (_what, config, fields) => {
    expect(parseMockConfig(config)).toStrictEqual({ ...parseMockConfig({}), ...fields });
  });
});

describe('mock config: each wrong value is a problem at its field', () => {
  it.each<[string, Record<string, unknown>, { field: string; message: string }[]]>([
    ['an unknown option', { colour: 'red' }, [{ field: 'colour', message: 'unknown mock driver option' }]],
    ['a duration of the wrong type', { run_for: true }, [{ field: 'run_for', message: 'expected a duration like "10s", got true' }]],
    ['a duration that does not parse', { kill_after: 'soon' }, [{ field: 'kill_after', message: '"soon" is not a duration: use a number of milliseconds or a Go duration like "15s", "1m30s", "250ms"' }]],
    ['a BigInt, shown with its n', { start_block_for: 5n }, [{ field: 'start_block_for', message: 'expected a duration like "10s", got 5n' }]],
    ['an integer that is a fraction', { exit_code: 1.5 }, [{ field: 'exit_code', message: 'expected an integer, got 1.5' }]],
    ['an integer given as a string', { exit_signal: '9' }, [{ field: 'exit_signal', message: 'expected an integer, got "9"' }]],
    ['a repeat given as a string', { stdout_repeat: 'x' }, [{ field: 'stdout_repeat', message: 'expected an integer, got "x"' }]],
    ['a string given as a number', { exit_err_msg: 5 }, [{ field: 'exit_err_msg', message: 'expected a string, got 5' }]],
    ['a string given as a function, shown as its source', { start_error: () => 1 }, [{ field: 'start_error', message: 'expected a string, got () => 1' }]],
    ['a boolean given as a string', { driver_advertise: 'yes' }, [{ field: 'driver_advertise', message: 'expected true or false, got "yes"' }]],
    ['start_error_recoverable given as a number', { start_error_recoverable: 1 }, [{ field: 'start_error_recoverable', message: 'expected true or false, got 1' }]],
    ['a port above 65535', { driver_port_map: 'http:65536' }, [{ field: 'driver_port_map', message: 'expected "label:port" pairs separated by commas, got "http:65536"' }]],
    ['a port of six digits', { driver_port_map: 'http:000080' }, [{ field: 'driver_port_map', message: 'expected "label:port" pairs separated by commas, got "http:000080"' }]],
    ['a pair with no port', { driver_port_map: 'http:' }, [{ field: 'driver_port_map', message: 'expected "label:port" pairs separated by commas, got "http:"' }]],
    ['a pair with text after the port', { driver_port_map: 'http:80x' }, [{ field: 'driver_port_map', message: 'expected "label:port" pairs separated by commas, got "http:80x"' }]],
    ['a label with a character outside [A-Za-z0-9_-]', { driver_port_map: 'a.b:80' }, [{ field: 'driver_port_map', message: 'expected "label:port" pairs separated by commas, got "a.b:80"' }]],
    ['a label that is empty', { driver_port_map: ':80' }, [{ field: 'driver_port_map', message: 'expected "label:port" pairs separated by commas, got ":80"' }]],
    ['one bad pair among good ones', { driver_port_map: 'http:80,x' }, [{ field: 'driver_port_map', message: 'expected "label:port" pairs separated by commas, got "x"' }]],
    ['exec_command as a string', { exec_command: 'ls' }, [{ field: 'exec_command', message: 'expected a block with run_for, exit_code and stdout_string, got "ls"' }]],
    ['exec_command as null', { exec_command: null }, [{ field: 'exec_command', message: 'expected a block with run_for, exit_code and stdout_string, got null' }]],
    ['exec_command as a list', { exec_command: [] }, [{ field: 'exec_command', message: 'expected a block with run_for, exit_code and stdout_string, got []' }]],
    ['an unknown exec_command option', { exec_command: { args: [] } }, [{ field: 'exec_command.args', message: 'unknown mock driver option' }]],
    ['exec_command.run_for that does not parse', { exec_command: { run_for: {} } }, [{ field: 'exec_command.run_for', message: 'expected a duration like "10s", got {}' }]],
    ['exec_command.exit_code that is not an integer', { exec_command: { exit_code: 'one' } }, [{ field: 'exec_command.exit_code', message: 'expected an integer, got "one"' }]],
    ['exec_command.exit_code that is a fraction', { exec_command: { exit_code: 0.5 } }, [{ field: 'exec_command.exit_code', message: 'expected an integer, got 0.5' }]],
    ['exec_command.stdout_string that is not a string', { exec_command: { stdout_string: 3 } }, [{ field: 'exec_command.stdout_string', message: 'expected a string, got 3' }]],
  ])('%s', (_what, config, problems) => {
    expect(problemsOf(config)).toEqual(problems);
  });

  it('a value JSON cannot show (a cycle) is shown as String() gives it', () => {
    const cycle: Record<string, unknown> = {};
    cycle['self'] = cycle;
    expect(problemsOf({ exit_code: cycle })).toEqual([{ field: 'exit_code', message: 'expected an integer, got [object Object]' }]);
  });

  it('names every problem in its message, in order, each under config.', () => {
    let error: unknown;
    try {
      parseMockConfig({ colour: 'red', run_for: true, exit_code: 'x' });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(MockConfigError);
    expect(error).toMatchObject({
      name: 'MockConfigError',
      code: 'ErrDriverConfig',
      recoverable: false,
      eventType: 'Failed Validation',
      message:
        'invalid mock driver config: config.colour: unknown mock driver option; config.run_for: expected a duration like "10s", got true; config.exit_code: expected an integer, got "x"',
    });
  });

  it('a MockConfigError made without problems lists none', () => {
    expect(new MockConfigError('m').problems).toEqual([]);
  });
});
