import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
let scratch: string | undefined;

afterAll(async () => {
  if (scratch) await rm(scratch, { recursive: true, force: true });
});

describe("the README's quick start", () => {
  it('npm start runs the demo job with real processes and the inspector, and exits 0', async () => {
    // `run` without --data-dir makes its data dir (and notes the last run) under the OS temp dir: a scratch one
    // here, so the suite leaves neither behind.
    scratch = await mkdtemp(join(tmpdir(), 'allocrun-quickstart-'));
    const child = spawn('npm', ['start', '--silent'], { cwd: root, env: { ...process.env, CI: 'true', TMPDIR: scratch }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    const code = await new Promise<number | null>((r) => child.on('exit', r));
    expect(out).toMatch(/inspector: http:\/\/127\.0\.0\.1:\d+\/\?token=/);
    for (const task of ['init', 'main', 'sidecar', 'cleanup']) expect(out).toMatch(new RegExp(`${task}\\s+Started`));
    expect(out).toMatch(/alloc demo-app-0 \(demo\.app\): complete/);
    expect(out).toContain(`data dir: ${join(scratch, 'allocrun-')}`);
    expect(code).toBe(0);
  });
});
