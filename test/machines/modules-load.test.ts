/// <reference types="vite/client" />
/**
 * Every machine and runtime module loads. A machine definition that cannot be built (an initial state that
 * is not there, a transition to nowhere) throws while its module is evaluated: every suite importing it then
 * fails as a file that cannot be imported, with no test run. Imported here inside a test, the same fault is
 * a failed test, which is what Stryker's vitest runner counts (it reads a file that failed to load as no
 * tests run, so such a mutant would pass for a survivor).
 */
import { describe, expect, it } from 'vitest';

const modules = {
  ...import.meta.glob(['../../machines/*.ts', '!../../machines/*-types.ts']),
  ...import.meta.glob(['../../src/runtime/*.ts', '!../../src/runtime/*-types.ts']),
};

describe('the machines and the runtime load', () => {
  it('finds the modules', () => {
    expect(Object.keys(modules).length).toBeGreaterThan(30);
  });

  it.each(Object.keys(modules).sort())('%s evaluates', async (path) => {
    await expect(modules[path]!()).resolves.toBeTypeOf('object');
  });
});
