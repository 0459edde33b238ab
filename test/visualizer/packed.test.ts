/**
 * The visualizer as users get it: the package is packed (`npm pack`, which builds it), installed from the
 * tarball into an empty app, and the app's `import { serveInspector } from 'allocrun'` serves a page that
 * a real Chromium loads and fills. Catches a page left out of the tarball or looked for in the wrong place.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from '../cli/spawn-cli.ts';
import { launchBrowser } from './chromium.ts';
import { OUTPUT_DIR } from './fixtures.ts';

const run = promisify(execFile);
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
let dir: string;
let app: string;
let tarball: string;
let child: ChildProcess | undefined;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'allocrun-packed-'));
  // `npm pack` runs prepack (`npm run build`: the library and the page) and writes the tarball here.
  await run(npm, ['pack', '--pack-destination', dir, '--silent'], { cwd: ROOT, maxBuffer: 16 * 1024 * 1024 });
  tarball = join(dir, (await readdir(dir)).find((f) => f.endsWith('.tgz'))!);
  app = join(dir, 'app');
  await mkdir(app);
  await writeFile(join(app, 'package.json'), JSON.stringify({ name: 'an-app', private: true, type: 'module' }));
  // The shared npm cache first; the registry only for what it lacks.
  await run(npm, ['install', '--prefer-offline', '--no-audit', '--no-fund', '--silent', tarball], { cwd: app, maxBuffer: 16 * 1024 * 1024 });
}, 300_000);

afterAll(async () => {
  child?.kill('SIGKILL');
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('the installed package', () => {
  it('ships the built page', async () => {
    const { stdout } = await run('tar', ['-tzf', tarball]);
    expect(stdout.split('\n')).toEqual(expect.arrayContaining(['package/visualizer/dist/index.html', 'package/visualizer/dist/app.js']));
  });

  it("serves the page from `import { serveInspector } from 'allocrun'`, and a real Chromium shows the allocation", async () => {
    await writeFile(
      join(app, 'main.js'),
      `import { createAllocRunner, serveInspector, allocRunnerControl } from 'allocrun';
const runners = new Map();
const inspector = await serveInspector({ control: allocRunnerControl((id) => runners.get(id)) });
const runner = createAllocRunner(
  { id: 'shop-1', job: 'shop', group: 'web', type: 'service', tasks: [{ name: 'api', driver: 'mock', config: { run_for: '1h' } }] },
  { inspect: inspector.inspect, dataDir: process.argv[2] },
);
runners.set('shop-1', runner);
runner.start();
console.log('url ' + inspector.url);
`,
    );
    child = spawn(process.execPath, ['main.js', join(dir, 'data')], { cwd: app, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stderr!.on('data', (d) => (err += d));
    const url = await new Promise<string>((resolve, reject) => {
      child!.stdout!.on('data', (d) => {
        out += d;
        const m = /url (\S+)/.exec(out);
        if (m) resolve(m[1]!);
      });
      child!.once('exit', (code) => reject(new Error(`the app exited (${code}) before serving:\n${out}\n${err}`)));
    });
    const browser = await launchBrowser();
    try {
      const page = await browser.context.newPage();
      const errors: string[] = [];
      page.on('pageerror', (e) => errors.push(String(e)));
      await page.goto(`${url}&select=shop-1/api`);
      await page.locator('#conn:text-is("connected")').waitFor();
      await page.locator('#allocs [data-path="shop-1"] [data-client-status="running"]').waitFor();
      await page.locator('#allocs [data-path="shop-1/api"] [data-task-state="running"]').waitFor();
      await page.locator('#chart g[data-state="task.running"].active').waitFor();
      await page.screenshot({ path: `${OUTPUT_DIR}/packed-page.png` });
      expect(errors).toEqual([]);
    } finally {
      await browser.close();
      child.kill('SIGTERM');
    }
  }, 120_000);

  it("runs a test written by `allocrun replay --to-test` with the installed package's `allocrun/testing`", async () => {
    // A run recorded by the app through the installed package (mock driver, simulated clock).
    await writeFile(
      join(app, 'record.js'),
      `import { createAllocRunner, recordInspection } from 'allocrun';
import { SimulatedClock } from 'allocrun/testing';
const clock = new SimulatedClock(0);
const rec = recordInspection(process.argv[2], { now: () => clock.now() });
const spec = { id: 'inc-1', job: 'inc', group: 'g', type: 'batch', tasks: [{ name: 'main', driver: 'mock', config: { run_for: '1s', exit_code: 1 } }] };
const runner = createAllocRunner(spec, { clock, builtinHooks: false, dataDir: process.argv[3], inspect: rec.inspect, machineClock: rec.machineClock }).start();
await clock.advanceUntil(() => runner.getState().clientStatus === 'failed');
runner.stop();
await rec.close();
`,
    );
    const recording = join(dir, 'incident.jsonl');
    await run(process.execPath, ['record.js', recording, join(dir, 'incident-data')], { cwd: app });
    const generated = await run(process.execPath, [join(app, 'node_modules/allocrun/bin/allocrun.js'), 'replay', '--to-test', recording], { cwd: app, maxBuffer: 16 * 1024 * 1024 });
    await writeFile(join(app, 'incident.test.ts'), generated.stdout);
    const { version } = JSON.parse(await readFile(join(ROOT, 'node_modules/vitest/package.json'), 'utf8')) as { version: string };
    await run(npm, ['install', '--prefer-offline', '--no-audit', '--no-fund', '--silent', `vitest@${version}`], { cwd: app, maxBuffer: 16 * 1024 * 1024 });
    const res = await run(process.execPath, [join(app, 'node_modules/vitest/vitest.mjs'), 'run', 'incident.test.ts'], { cwd: app, env: { ...process.env, NO_COLOR: '1' } });
    expect(res.stdout).toMatch(/1 passed/);
  }, 300_000);
});
