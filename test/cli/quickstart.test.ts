import { spawn } from 'node:child_process';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

describe("the README's quick start", () => {
  it('npm start runs the demo job with real processes and the inspector, and exits 0', async () => {
    const child = spawn('npm', ['start', '--silent'], { cwd: root, env: { ...process.env, CI: 'true' }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    const code = await new Promise<number | null>((r) => child.on('exit', r));
    expect(out).toMatch(/inspector: http:\/\/127\.0\.0\.1:\d+\/\?token=/);
    for (const task of ['init', 'main', 'sidecar', 'cleanup']) expect(out).toMatch(new RegExp(`${task}\\s+Started`));
    expect(out).toMatch(/alloc demo-app-0 \(demo\.app\): complete/);
    expect(code).toBe(0);
  });
});
