/**
 * An embedder that runs allocrun with raw_exec tasks inside `worker_threads` Workers (README, embedding): a
 * worker that ran a task and read its output ends without closing fds it no longer owns. In a worker, Node
 * tracks each fd opened through `fs` until `fs.close` and closes what it still tracks when the worker ends;
 * output pipes opened that way but closed by their sockets left numbers behind that, reused meanwhile,
 * were another thread's (the process aborted when they were a libuv loop's). Run in a child process, so
 * an abort fails this test instead of ending the test runner.
 */
import { execFile } from 'node:child_process';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../temp-dirs.ts';

const here = dirname(fileURLToPath(import.meta.url));
const repoRoot = resolve(here, '..', '..');

describe('raw_exec inside a worker thread', () => {
  it('runs a task, reads its output, and the worker ends leaving the fds of the rest of the process alone', async () => {
    const dir = tempDir('allocrun-in-worker-');
    const { code, stdout, stderr } = await new Promise<{ code: number | null; stdout: string; stderr: string }>((done) => {
      execFile(process.execPath, ['--import', 'tsx', join(here, 'fixtures', 'raw-exec-in-worker.ts'), dir], { cwd: repoRoot, timeout: 60_000 }, (err, stdout, stderr) =>
        done({ code: err ? ((err as { code?: number }).code ?? null) : 0, stdout, stderr }),
      );
    });
    expect(stderr).not.toMatch(/unmanaged mode/);
    expect({ code, stdout }).toEqual({ code: 0, stdout: 'worker 1: hi\nworker 2: hi\n' });
  }, 90_000);
});
