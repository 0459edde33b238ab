/**
 * Runs a CLI command in this process against an agent's data dir, its output captured: the exit status (a thrown
 * CliError's), stdout, and stderr with the CliError's message. Faster than a CLI process per row; one real
 * process per suite still checks what reaches the shell.
 */
import { vi } from 'vitest';
import type { Command } from '../../src/cli/args.ts';
import { CliError } from '../../src/cli/errors.ts';

export async function runInProcess(command: Command, args: string[], dataDir: string): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const out = vi.spyOn(process.stdout, 'write').mockImplementation((c) => ((stdout += String(c)), true));
  const err = vi.spyOn(process.stderr, 'write').mockImplementation((c) => ((stderr += String(c)), true));
  try {
    const code = await command.run([...args, '--data-dir', dataDir]);
    return { code, stdout, stderr };
  } catch (e) {
    if (!(e instanceof CliError)) throw e;
    return { code: e.exitCode, stdout, stderr: stderr + e.message };
  } finally {
    out.mockRestore();
    err.mockRestore();
  }
}
