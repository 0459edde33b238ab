/**
 * `allocrun replay <FILE>`: serves a recorded inspection stream (`run --record`) in the visualizer;
 * `--check` re-drives its inputs through today's machines and compares their steps with the recorded ones;
 * `--to-test` writes a vitest test doing the same.
 */
import { access, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseCommand, type Command } from './args.ts';
import { CliError, UsageError } from './errors.ts';
import { importOptional } from './optional-module.ts';
import { parsePort } from './inspect-seam.ts';

type ServeReplay = (file: string, opts: { port?: number; host?: string }) => Promise<{ url: string; close(): Promise<void> | void }>;

/** Serves `file` in the visualizer until Ctrl-C. */
async function serve(file: string, shown: string, port: number | undefined, host: string | undefined): Promise<void> {
  const serveReplay = await importOptional<ServeReplay>('../inspect/replay.ts', 'serveReplay', 'replay (the visualizer, src/inspect/)');
  const server = await serveReplay(file, { port, host });
  process.stdout.write(`replaying ${shown} at ${server.url} (Ctrl-C to stop)\n`);
  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  await server.close();
}

/** The `replay` command. */
export const replayCommand: Command = {
  name: 'replay',
  usage: 'replay <FILE> [--check [--open]] [--to-test] [--port PORT] [--host HOST]',
  details: `
Replay a recording made with 'run --record': in the visualizer (the default), or
re-driven through today's machines.

Flags:
  --check      re-drive the recorded inputs (commands, driver and hook results,
               clock readings) through today's machines on a simulated clock and
               compare every step and TaskState with the recording: exit 0 when
               identical, 1 at the first divergence (printed), 2 when the file
               cannot be checked (another replay format version, not a recording)
  --open       with --check: serve the checked replay in the visualizer, the
               divergence marked on its timeline
  --to-test    write a vitest test to stdout that re-drives the recorded inputs
               through 'allocrun/testing' and expects the recorded steps and end
               state
  --port PORT  port to serve the visualizer on (default: the visualizer's)
  --host HOST  address to listen on (default 127.0.0.1)
  -h, --help   show this help

Examples:
  allocrun run job.nomad --record run.jsonl && allocrun replay run.jsonl
  allocrun replay --check run.jsonl
  allocrun replay --to-test run.jsonl > incident.test.ts`,
  async run(argv) {
    const parsed = parseCommand(
      this,
      argv,
      { port: { type: 'string' }, host: { type: 'string' }, check: { type: 'boolean' }, open: { type: 'boolean' }, 'to-test': { type: 'boolean' } },
      { min: 1, max: 1, names: 'the recording FILE' },
    );
    if (!parsed) return 0;
    const { values } = parsed;
    const file = parsed.positionals[0]!;
    const port = values.port === undefined ? undefined : parsePort('replay', '--port', values.port);
    if (values.open && !values.check) throw new UsageError('replay: --open goes with --check (without --check the recording is served anyway)', 'replay');
    if (values.check && values['to-test']) throw new UsageError('replay: give --check or --to-test, not both', 'replay');
    const serves = values.open || (!values.check && !values['to-test']);
    if (!serves && (values.port !== undefined || values.host !== undefined)) throw new UsageError('replay: --port and --host are for serving the visualizer (without --check or --to-test, or with --check --open)', 'replay');

    if (values['to-test']) {
      const { readRecordingWithInputs, replayOrRefuse } = await import('./replay-check.ts');
      const { incidentTest } = await import('./replay-to-test.ts');
      const lines = await readRecordingWithInputs(file);
      // Replayed first: a recording the replay cannot act on gets no test.
      const { divergence } = await replayOrRefuse(file, lines);
      process.stdout.write(incidentTest(file, lines));
      if (divergence) process.stderr.write(`replay: note: today's machines already diverge from ${file} (${divergence.message}); the test fails until they do not\n`);
      return 0;
    }

    if (values.check) {
      const { checkRecording, divergenceReport, identicalReport, writeCheckedCopy } = await import('./replay-check.ts');
      const outcome = await checkRecording(file);
      const d = outcome.result.divergence;
      process.stdout.write(d ? divergenceReport(file, d) : identicalReport(file, outcome));
      if (values.open) {
        // The page reads the divergence from the file it is served: a copy of the recording with it appended.
        const dir = await mkdtemp(join(tmpdir(), 'allocrun-replay-'));
        try {
          await serve(await writeCheckedCopy(file, d, dir), `${file} (checked)`, port, values.host);
        } finally {
          await rm(dir, { recursive: true, force: true });
        }
      }
      return d ? 1 : 0;
    }

    try {
      await access(file);
    } catch {
      throw new CliError(`replay: cannot read ${file}: no such file (record one with 'allocrun run <jobfile> --record ${file}')`, 'ErrReplayFile');
    }
    await serve(file, file, port, values.host);
    return 0;
  },
};
