import { describe, expect, it } from 'vitest';
import { artifactConfigFromFlags, parseSize } from '../../src/cli/artifact-flags.ts';
import { UsageError } from '../../src/cli/errors.ts';

describe("the agent's artifact flags (Nomad's client artifact block)", () => {
  it('reads sizes as go-humanize does: SI and binary units, or bytes', () => {
    expect(parseSize('100GB')).toBe(100e9);
    expect(parseSize('512MiB')).toBe(512 * 1024 ** 2);
    expect(parseSize('1.5 kb')).toBe(1500);
    expect(parseSize('4096')).toBe(4096);
    expect(parseSize('ten')).toBeUndefined();
    expect(parseSize('5 parsecs')).toBeUndefined();
  });

  it('turns the flags into the limits the hook uses, leaving the rest to the defaults', () => {
    expect(artifactConfigFromFlags({})).toEqual({});
    expect(artifactConfigFromFlags({ 'artifact-http-read-timeout': '90s', 'artifact-http-max-size': '1GiB', 'artifact-decompression-size-limit': '0', 'artifact-decompression-file-count-limit': '10' }))
      .toEqual({ httpReadTimeout: 90_000, httpMaxSize: 1024 ** 3, decompressionSizeLimit: 0, decompressionFileCountLimit: 10 });
  });

  it.each<[string, string, RegExp]>([
    ['artifact-http-read-timeout', 'soon', /--artifact-http-read-timeout "soon": expected a duration/],
    ['artifact-http-read-timeout', '0s', /must be more than 0s/],
    ['artifact-http-max-size', 'big', /--artifact-http-max-size "big": expected a size/],
    ['artifact-http-max-size', '0', /must be more than 0 bytes/],
    ['artifact-decompression-file-count-limit', '-1', /expected a whole number of files/],
  ])('refuses --%s %s, naming the flag', (flag, value, message) => {
    expect(() => artifactConfigFromFlags({ [flag]: value })).toThrow(UsageError);
    expect(() => artifactConfigFromFlags({ [flag]: value })).toThrow(message);
  });
});
