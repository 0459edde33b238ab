/** `allocrun replay <FILE>`: serves a recorded inspection stream (`run --record`) in the visualizer. */
import { access } from 'node:fs/promises';
import { parseCommand, type Command } from './args.ts';
import { CliError } from './errors.ts';
import { importOptional } from './optional-module.ts';
import { parsePort } from './inspect-seam.ts';

type ServeReplay = (file: string, opts: { port?: number; host?: string }) => Promise<{ url: string; close(): Promise<void> | void }>;

/** The `replay` command: delegates to the visualizer's `serveReplay` and serves until Ctrl-C. */
export const replayCommand: Command = {
  name: 'replay',
  usage: 'replay <FILE> [--port PORT] [--host HOST]',
  details: `
Replay a recording made with 'run --record' in the visualizer.

Flags:
  --port PORT  port to serve the visualizer on (default: the visualizer's)
  --host HOST  address to listen on (default 127.0.0.1)
  -h, --help   show this help

Example:
  allocrun run job.nomad --record run.jsonl && allocrun replay run.jsonl`,
  async run(argv) {
    const parsed = parseCommand(this, argv, { port: { type: 'string' }, host: { type: 'string' } }, { min: 1, max: 1, names: 'the recording FILE' });
    if (!parsed) return 0;
    const file = parsed.positionals[0]!;
    const port = parsed.values.port === undefined ? undefined : parsePort('replay', '--port', parsed.values.port);
    try {
      await access(file);
    } catch {
      throw new CliError(`replay: cannot read ${file}: no such file (record one with 'allocrun run <jobfile> --record ${file}')`, 'ErrReplayFile');
    }
    const serveReplay = await importOptional<ServeReplay>('../inspect/replay.ts', 'serveReplay', 'replay (the visualizer, src/inspect/)');
    const server = await serveReplay(file, { port, host: parsed.values.host });
    process.stdout.write(`replaying ${file} at ${server.url} (Ctrl-C to stop)\n`);
    await new Promise<void>((resolve) => {
      process.once('SIGINT', resolve);
      process.once('SIGTERM', resolve);
    });
    await server.close();
    return 0;
  },
};
