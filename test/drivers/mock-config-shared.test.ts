/**
 * The mock driver reads each task's config through sharedMockConfig (src/drivers/mock/mock-config.ts): the
 * parse's answer, frozen, and the same object again for a config of the same plain values; anything JSON would not
 * write back as it was (objects, -0, NaN, keys it cannot see) is parsed anew every time, a failing config is never
 * kept, and parseMockConfig itself still answers a fresh object of its own.
 */
import { describe, expect, it } from 'vitest';
import { MockConfigError, parseMockConfig, sharedMockConfig } from '../../src/drivers/mock/mock-config.ts';

describe('sharedMockConfig', () => {
  it('answers what parseMockConfig answers, frozen, and one object for configs of the same plain values', () => {
    const a = sharedMockConfig({ run_for: '2s', exit_code: 3, driver_port_map: 'http:80', driver_advertise: true });
    expect(a).toEqual(parseMockConfig({ run_for: '2s', exit_code: 3, driver_port_map: 'http:80', driver_advertise: true }));
    expect(Object.isFrozen(a)).toBe(true);
    expect(Object.isFrozen(a.driverPortMap)).toBe(true);
    expect(sharedMockConfig({ run_for: '2s', exit_code: 3, driver_port_map: 'http:80', driver_advertise: true })).toBe(a);
    expect(sharedMockConfig({ run_for: '2s', exit_code: 4, driver_port_map: 'http:80', driver_advertise: true })).not.toBe(a);
  });

  it('parses anew every config JSON would not write back as it was', () => {
    const configs: Record<string, unknown>[] = [
      { run_for: '1s', exec_command: { run_for: '1s', exit_code: 0, stdout_string: 'x' } },
      { run_for: '1s', exit_code: -0 },
      Object.defineProperty({ exit_code: 1 }, 'run_for', { value: '5s', enumerable: false }),
      Object.assign(Object.create(null) as Record<string, unknown>, { run_for: '1s' }),
    ];
    for (const c of configs) expect(sharedMockConfig(c)).not.toBe(sharedMockConfig(c));
    // The hidden run_for is read by the parse, so the config is not the one of { exit_code: 1 }.
    expect(sharedMockConfig(configs[2]!).runFor).toBe(5000);
    expect(sharedMockConfig({ exit_code: 1 }).runFor).toBe(0);
    expect(Object.is(sharedMockConfig(configs[1]!).exitCode, -0)).toBe(true);
  });

  it('throws for a bad config every time, as the parse does', () => {
    for (let i = 0; i < 2; i++) expect(() => sharedMockConfig({ run_for: 'soon' })).toThrow(MockConfigError);
  });

  it('leaves parseMockConfig answering a fresh object, which its caller may change', () => {
    const c = { run_for: '7s' };
    sharedMockConfig(c);
    const mine = parseMockConfig(c);
    expect(Object.isFrozen(mine)).toBe(false);
    expect(mine).not.toBe(parseMockConfig(c));
  });
});
