/**
 * `allocrun operator snapshot save|restore`: Nomad's names for taking a consistent copy of the agent's
 * store while it runs, and for putting one back into an empty data dir to start an agent on.
 */
import { once } from 'node:events';
import { createWriteStream, existsSync } from 'node:fs';
import { chmod, copyFile, mkdir, rename, rm } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { AgentStore, STORE_FILE } from '../state/agent-store.ts';
import { parseCommand, type Command } from './args.ts';
import { agentClient, agentSocketIn, AGENT_FLAGS, AGENT_FLAGS_HELP } from './api-client.ts';
import { CliError, UsageError } from './errors.ts';
import { snapshotRefusal } from './snapshot-refusal.ts';

const snapshotSave: Command = {
  name: 'operator snapshot save',
  usage: 'operator snapshot save <file> [--data-dir D | --address URL [--token-file F]]',
  details: `
Save a consistent copy of a running agent's whole store (jobs and their versions, evaluations,
allocations, every runner's state) to FILE (mode 0600), while the agent keeps serving.

Flags:
${AGENT_FLAGS_HELP}`,
  async run(argv) {
    const parsed = parseCommand(this, argv, { ...AGENT_FLAGS }, { min: 1, max: 1, names: 'the file to write' });
    if (!parsed) return 0;
    const file = resolve(parsed.positionals[0]!);
    const client = agentClient('operator snapshot save', parsed.values);
    const res = await client.stream('/v1/operator/snapshot');
    // Written beside the target and renamed: a snapshot cut short never takes the file's name.
    const partial = `${file}.partial-${process.pid}`;
    try {
      const out = createWriteStream(partial, { mode: 0o600 });
      await once(out, 'open');
      await pipeline(res, out);
      await verifySnapshot(partial);
      await rename(partial, file);
    } catch (err) {
      await rm(partial, { force: true });
      throw err;
    }
    process.stdout.write(`Saved the store of the agent at ${client.label} to ${file}\n`);
    return 0;
  },
};

const snapshotRestore: Command = {
  name: 'operator snapshot restore',
  usage: 'operator snapshot restore <file> --data-dir D',
  details: `
Restore a snapshot saved with 'operator snapshot save' into data dir D, which must hold no store
yet (and no agent may serve it); then start the agent on D ('allocrun agent --data-dir D'). The
restored agent reconciles what it finds: allocations whose processes are gone are restarted under
their restart policy.

Flags:
  -d, --data-dir D  the data dir to restore into (created, 0700, when missing)`,
  async run(argv) {
    const parsed = parseCommand(this, argv, { 'data-dir': { type: 'string', short: 'd' } }, { min: 1, max: 1, names: 'the snapshot file' });
    if (!parsed) return 0;
    const dir = parsed.values['data-dir'] || process.env.ALLOCRUN_DATA_DIR;
    if (!dir) throw new UsageError('operator snapshot restore: --data-dir D is required (the empty data dir to restore into)', 'operator snapshot restore');
    const dataDir = resolve(dir);
    const file = resolve(parsed.positionals[0]!);
    if (!existsSync(file)) throw new CliError(`operator snapshot restore: ${file} does not exist`, 'ErrNoSnapshot');
    if (agentSocketIn(dataDir)) throw new CliError(`operator snapshot restore: an agent may be serving ${dataDir} (its socket is there); stop it first`, 'ErrAgentRunning');
    const target = join(dataDir, STORE_FILE);
    if (existsSync(target)) throw new CliError(`operator snapshot restore: ${dataDir} already has a store (${target}); restore into an empty data dir, or move that store aside first`, 'ErrStoreExists');
    // The first dir this made, if any: a refused snapshot leaves nothing, not an empty data dir either.
    const made = await mkdir(dataDir, { recursive: true, mode: 0o700 });
    const partial = `${target}.partial-${process.pid}`;
    try {
      await copyFile(file, partial);
      await chmod(partial, 0o600);
      await verifySnapshot(partial, file);
      await rename(partial, target);
    } catch (err) {
      await rm(partial, { force: true });
      await rm(`${partial}-lock`, { force: true });
      if (made) await rm(made, { recursive: true, force: true });
      throw err;
    }
    const store = AgentStore.open(dataDir, { create: false });
    const counts = { jobs: store.entries('jobs').values.length, allocs: store.entries('allocs').values.length };
    await store.close();
    process.stdout.write(`Restored ${file} into ${dataDir}: ${counts.jobs} jobs, ${counts.allocs} allocations. Start the agent with 'allocrun agent --data-dir ${dataDir}'.\n`);
    return 0;
  },
};

/** Opens a copied snapshot read-only and reads every table: a file that is no store is named, not restored. */
async function verifySnapshot(path: string, shownAs = path): Promise<void> {
  let store: AgentStore;
  try {
    store = AgentStore.openFile(path, { readOnly: true, create: false });
  } catch (err) {
    throw snapshotRefusal(shownAs, path, err);
  }
  try {
    for (const t of ['meta', 'jobs', 'allocs', 'evals', 'runners'] as const) {
      const { damaged } = store.entries(t);
      if (damaged.length > 0) throw new CliError(`${shownAs} is damaged: ${damaged.map((d) => `${d.table}/${d.key}: ${d.why}`).join('; ')}`, 'ErrBadSnapshot');
    }
    if (store.isNew) throw new CliError(`${shownAs} is not an allocrun snapshot: it has no allocrun store layout mark`, 'ErrBadSnapshot');
  } finally {
    await store.close();
    await rm(`${path}-lock`, { force: true });
  }
}

const snapshotGroup: Command = {
  name: 'operator snapshot',
  usage: 'operator snapshot <save|restore> <file> [flags]',
  details: `
Save or restore a consistent copy of the agent's store.

Subcommands:
  allocrun ${snapshotSave.usage}
  allocrun ${snapshotRestore.usage}`,
  async run(argv) {
    const [sub, ...rest] = argv;
    if (sub === 'save') return snapshotSave.run(rest);
    if (sub === 'restore') return snapshotRestore.run(rest);
    if (sub === '--help' || sub === '-h') {
      process.stdout.write(`Usage: allocrun ${this.usage}\n${this.details}\n`);
      return 0;
    }
    throw new UsageError(`operator snapshot: ${sub === undefined ? 'a subcommand is required' : `unknown subcommand ${JSON.stringify(sub)}`}; subcommands: save, restore`, 'operator');
  },
};

/** The `operator` command (Nomad's name): today, `snapshot save|restore`. */
export const operatorCommand: Command = {
  name: 'operator',
  usage: 'operator snapshot <save|restore> <file> [flags]',
  details: snapshotGroup.details,
  async run(argv) {
    const [sub, ...rest] = argv;
    if (sub === 'snapshot') return snapshotGroup.run(rest);
    if (sub === '--help' || sub === '-h') {
      process.stdout.write(`Usage: allocrun ${this.usage}\n${this.details}\n`);
      return 0;
    }
    throw new UsageError(`operator: ${sub === undefined ? 'a subcommand is required' : `unknown subcommand ${JSON.stringify(sub)}`}; subcommands: snapshot`, 'operator');
  },
};
