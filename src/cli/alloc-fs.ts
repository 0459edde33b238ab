/**
 * `allocrun alloc fs`: Nomad's `nomad alloc fs` over the agent's allocation filesystem routes
 * (`/v1/client/fs/stat|ls|cat|stream/:alloc?path=`): a directory is listed, a file printed, `-stat` describes
 * the path, `-f` follows a file as it grows (`-tail -n N` from its last lines).
 */
import { parseCommand, type Command } from './args.ts';
import { agentClient, AGENT_FLAGS, AGENT_FLAGS_HELP, type AgentClient } from './api-client.ts';
import type { ApiAllocation } from './api-records.ts';
import { UsageError } from './errors.ts';
import { columns, formatTime } from './format.ts';
import { startOfLastLines } from './last-lines.ts';

/** Nomad's AllocFileInfo. */
interface FileInfo {
  Name: string;
  IsDir: boolean;
  Size: number;
  FileMode: string;
  ModTime: string;
  ContentType: string;
}

/** A size as Nomad's CLI prints it (go-humanize's IBytes: `12 B`, `4.0 KiB`, `13 MiB`), or in bytes with -H. */
export function humanSize(bytes: number, machine: boolean): string {
  if (machine) return String(bytes);
  if (bytes < 10) return `${bytes} B`;
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB', 'EiB'];
  const e = Math.floor(Math.log(bytes) / Math.log(1024));
  const value = Math.floor((bytes / 1024 ** e) * 10 + 0.5) / 10;
  return `${value >= 10 ? value.toFixed(0) : value.toFixed(1)} ${units[e]}`;
}

/** The rows of a listing (`-stat` adds the content type), the header first, as Nomad's formatList prints them. */
export function fileRows(files: FileInfo[], opts: { machine: boolean; stat: boolean }): string[] {
  const name = (f: FileInfo) => (f.IsDir && f.Name !== '/' ? `${f.Name}/` : f.Name);
  const row = (f: FileInfo) => [f.FileMode, humanSize(f.Size, opts.machine), formatTime(Date.parse(f.ModTime)), ...(opts.stat ? [f.ContentType] : []), name(f)];
  return columns([['Mode', 'Size', 'Modified Time', ...(opts.stat ? ['Content Type'] : []), 'Name'], ...files.map(row)]);
}

async function pipe(res: NodeJS.ReadableStream): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    res.on('data', (chunk: Buffer) => process.stdout.write(chunk));
    res.on('end', resolve);
    res.on('error', reject);
  });
}

/** The command, resolving an allocation ID or prefix with `resolveAlloc`. */
export function allocFsCommand(resolveAlloc: (client: AgentClient, wanted: string) => Promise<ApiAllocation>): Command {
  return {
    name: 'alloc fs',
    usage: 'alloc fs [-stat] [-H] [-f] [-tail [-n N]] <alloc> [path] [--data-dir D | --address URL [--token-file F | --token T]]',
    details: `
Browse an allocation's directory, as 'nomad alloc fs' does: a directory (default: the allocation's
own, "/") is listed, a file is printed. Paths are inside the allocation directory (alloc/, and a
directory per task with local/, secrets/, tmp/); ".." and symlinks out of it are refused.

Flags:
  -stat             describe the path (mode, size, time, content type) instead of listing or printing it
  -H                sizes in bytes
  -f                keep printing what is appended to the file (Ctrl-C to stop)
  -tail             print the end of the file: its last -n lines (default 10)
  -n N              with -tail, how many lines
${AGENT_FLAGS_HELP}`,
    async run(argv) {
      const parsed = parseCommand(this, argv, { ...AGENT_FLAGS, stat: { type: 'boolean' }, H: { type: 'boolean' }, f: { type: 'boolean' }, tail: { type: 'boolean' }, n: { type: 'string' } }, { min: 1, max: 2, names: 'the allocation ID and a path' });
      if (!parsed) return 0;
      const v = parsed.values;
      const lines = v.n === undefined ? 10 : Number(v.n);
      if (v.n !== undefined && !(Number.isInteger(lines) && lines >= 0 && /^\d+$/.test(v.n.trim()))) throw new UsageError(`alloc fs: -n ${JSON.stringify(v.n)}: expected a whole number of lines`, 'alloc fs');
      const client = agentClient('alloc fs', v);
      const alloc = await resolveAlloc(client, parsed.positionals[0]!);
      const path = parsed.positionals[1] ?? '/';
      const { body: info } = await client.get<FileInfo>(`/v1/client/fs/stat/${alloc.ID}`, { path });
      if (v.stat) {
        process.stdout.write(`${fileRows([info], { machine: v.H === true, stat: true }).join('\n')}\n`);
        return 0;
      }
      if (info.IsDir) {
        if (v.f || v.tail) throw new UsageError(`alloc fs: ${path} is a directory: -f and -tail read a file`, 'alloc fs');
        const { body: files } = await client.get<FileInfo[]>(`/v1/client/fs/ls/${alloc.ID}`, { path });
        process.stdout.write(`${fileRows(files, { machine: v.H === true, stat: false }).join('\n')}\n`);
        return 0;
      }
      if (!v.f && !v.tail) {
        await pipe(await client.stream(`/v1/client/fs/cat/${alloc.ID}`, { path }));
        return 0;
      }
      let offset = 0;
      if (v.tail) {
        const chunks: Buffer[] = [];
        const res = await client.stream(`/v1/client/fs/cat/${alloc.ID}`, { path });
        for await (const chunk of res) chunks.push(chunk as Buffer);
        const all = Buffer.concat(chunks);
        offset = startOfLastLines(all, lines);
        if (!v.f) {
          process.stdout.write(all.subarray(offset));
          return 0;
        }
      }
      await pipe(await client.stream(`/v1/client/fs/stream/${alloc.ID}`, { path, plain: true, follow: true, origin: 'start', offset }));
      return 0;
    },
  };
}
