/**
 * Launches a real headless Chromium for the visualizer tests: `CHROMIUM_PATH`, else /usr/bin/chromium,
 * else the one @sparticuz/chromium unpacks. Fails loudly when none starts: these tests must not skip.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext } from 'playwright-core';

const ARGS = [
  '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync',
];

async function executablePath(): Promise<string> {
  if (process.env.CHROMIUM_PATH) return process.env.CHROMIUM_PATH;
  if (existsSync('/usr/bin/chromium')) return '/usr/bin/chromium';
  try {
    return await (await import('@sparticuz/chromium')).default.executablePath();
  } catch (err) {
    throw new Error(`no Chromium for the visualizer tests: set CHROMIUM_PATH, install /usr/bin/chromium, or fix @sparticuz/chromium (${(err as Error).message})`);
  }
}

/** A browser with a fresh profile; `close` removes the profile too. */
export async function launchBrowser(): Promise<{ context: BrowserContext; close(): Promise<void> }> {
  const exe = await executablePath();
  const profile = await mkdtemp(join(tmpdir(), 'allocrun-chromium-'));
  let context: BrowserContext;
  try {
    context = await chromium.launchPersistentContext(profile, { executablePath: exe, headless: true, args: ARGS, viewport: { width: 1440, height: 900 } });
  } catch (err) {
    await rm(profile, { recursive: true, force: true });
    throw new Error(`Chromium at ${exe} did not start: ${(err as Error).message}`);
  }
  return {
    context,
    async close() {
      await context.close();
      await rm(profile, { recursive: true, force: true });
    },
  };
}
