/**
 * `allocrun run <jobfile>`: runs a job's allocations in the foreground, shows their tasks live, saves their
 * state to the data dir as it changes, and exits 0 when every allocation completed, 1 when any failed.
 */
import { mkdir } from 'node:fs/promises';
import { resolve } from 'node:path';
import { createAllocRunner, type AllocRunner } from '../runtime/create-alloc-runner.ts';
import type { AllocSpec } from '../jobspec/types.ts';
import { FileStateStore } from '../state/file-store.ts';
import type { StateStore } from '../state/store.ts';
import type { AgentRecord } from '../runtime/create-agent.ts';
import { parseCommand, type Command } from './args.ts';
import { freshDataDir, rememberDataDir } from './data-dir.ts';
import { CliError, UsageError } from './errors.ts';
import { inspectorToken, openInspection, parsePort } from './inspect-seam.ts';
import { loadJob, warningLines } from './job-file.ts';
import { placeRunPorts, refuseInfeasible } from './run-ports.ts';
import { chooseView, followTaskOutput, watchRunner } from './watch.ts';
import { VAR_FLAGS, VAR_FLAGS_HELP, variableInputsOf } from './var-flags.ts';

/** Exit status after a forced (second Ctrl-C) exit: 128 + SIGINT, as shells report it. */
const FORCED_EXIT = 130;

/**
 * Saves an allocation's record as it changes, one write at a time: while a write is under way only a flag
 * waits, and the next write takes the newest state, so a burst of task events costs two writes, not one
 * per event. The record carries the runner's snapshot, so `allocrun agent` can resume the allocation.
 */
class StatePersister {
  private pending = false;
  private frozen = false;
  private writing: Promise<void> | undefined;
  private readonly createdAt = Date.now();

  constructor(
    private readonly store: StateStore,
    private readonly spec: AllocSpec,
    private readonly runner: AllocRunner,
    private readonly onError: (err: unknown) => void,
  ) {}

  /** Saves the runner's current state soon. */
  update(): void {
    this.pending = true;
    this.writing ??= this.flush().finally(() => (this.writing = undefined));
  }

  /** Resolves once the newest state asked for is on disk (or failed to be). */
  async settled(): Promise<void> {
    while (this.writing) await this.writing;
  }

  /** Writes the current state, then no more: what is on disk is what a later agent resumes from. */
  async freeze(): Promise<void> {
    this.update();
    await this.settled();
    this.frozen = true;
  }

  private async flush(): Promise<void> {
    while (this.pending && !this.frozen) {
      this.pending = false;
      const record: AgentRecord = { spec: this.spec, state: this.runner.getState(), createdAt: this.createdAt, updatedAt: Date.now(), snapshot: this.runner.persist() };
      try {
        await this.store.save(this.spec.id, record);
      } catch (err) {
        this.onError(err);
      }
    }
  }
}

/** The allocations to run: all of them, or those of `group`; a CliError naming the groups otherwise. */
function selectAllocs(allocs: AllocSpec[], group: string | undefined, jobFile: string): AllocSpec[] {
  const groups = [...new Set(allocs.map((a) => a.group))];
  const selected = group === undefined ? allocs : allocs.filter((a) => a.group === group);
  if (group !== undefined && selected.length === 0) {
    throw new CliError(`run: job file ${jobFile} has no group ${JSON.stringify(group)} (groups: ${groups.join(', ')})`, 'ErrNoSuchGroup');
  }
  if (selected.length === 0) throw new CliError(`run: job file ${jobFile} has no allocations to run (every group has count = 0)`, 'ErrNothingToRun');
  return selected;
}

/** The `run` command. */
export const runCommand: Command = {
  name: 'run',
  usage: 'run <jobfile> [-var NAME=VALUE]... [-var-file F]... [--group G] [--data-dir D] [--inspect[=PORT] [--inspect-token T] [--stately]] [--record FILE] [--json]',
  details: `
Run a job file's allocations in the foreground with a live view of their tasks.

Runs every allocation of the job (one per group instance) through Nomad's lifecycle: prestart
tasks, main tasks, poststart, poststop. On a terminal the task table is redrawn in place;
otherwise each task event is printed as a line.

Ctrl-C (or SIGTERM) kills the allocations the way Nomad stops them, so poststop tasks still run;
a second Ctrl-C exits at once (status 130), leaving tasks that still run running: their state is
saved, and 'allocrun agent --data-dir D' reattaches to them.
Exit status: 0 when every allocation completed, 1 when any failed.

Flags:
  -g, --group G       run only the allocations of task group G
  -d, --data-dir D    where alloc dirs, logs and state go (default: a new temp dir, printed)
  --inspect[=PORT]    serve the visualizer while the job runs (after the run it stays up
                      until Ctrl-C where a terminal can press it, else while a page is
                      open); without PORT, the port is kept in
                      D/inspect-port so a re-run on D serves the same address
  --inspect-token T   the visualizer's token (default: kept in D/inspect-token, 0600)
  --stately           also serve the stream in @statelyai/inspect's format (printed URL)
  --record FILE       record the inspection stream to FILE (see 'allocrun replay')
  --json              one JSON object per line for every task event and state change
${VAR_FLAGS_HELP}
  -h, --help          show this help

Examples:
  allocrun run examples/demo.nomad
  allocrun run job.nomad --group web --data-dir ./data --json`,
  async run(argv) {
    // parseArgs has no optional values: a bare --inspect would swallow the next argument as its port.
    const args = argv.map((a) => (a === '--inspect' ? '--inspect=' : a));
    const parsed = parseCommand(
      this,
      args,
      {
        group: { type: 'string', short: 'g' },
        'data-dir': { type: 'string', short: 'd' },
        inspect: { type: 'string' },
        'inspect-token': { type: 'string' },
        stately: { type: 'boolean' },
        record: { type: 'string' },
        json: { type: 'boolean' },
        ...VAR_FLAGS,
      },
      { min: 1, max: 1, names: 'the job file' },
    );
    if (!parsed) return 0;
    const { values } = parsed;
    const jobFile = parsed.positionals[0]!;
    const inspectPort = values.inspect === undefined ? undefined : values.inspect === '' ? null : parsePort('run', '--inspect', values.inspect);

    const loaded = await loadJob(jobFile, await variableInputsOf(values));
    process.stderr.write(warningLines(loaded.warnings));
    // Ports as the agent would place them, so a network block's ${NOMAD_PORT_<label>} is a port here too.
    const allocs = await placeRunPorts(refuseInfeasible(selectAllocs(loaded.allocs, values.group, jobFile), loaded.job, jobFile), jobFile);

    const dataDir = values['data-dir'] ? resolve(values['data-dir']) : await freshDataDir();
    await mkdir(dataDir, { recursive: true, mode: 0o700 });
    // A temp dir's name is hard to recall: note it so a bare `allocrun status` finds this run.
    if (!values['data-dir']) await rememberDataDir(dataDir);
    const store = new FileStateStore(dataDir);
    const byId = new Map<string, AllocRunner>();
    if (values.stately && inspectPort === undefined) throw new UsageError('run: --stately needs --inspect (it is served by the visualizer\'s server)', 'run');
    const token = inspectPort === undefined ? undefined : await inspectorToken(values['inspect-token'], dataDir, 'run');
    const inspection = await openInspection({ inspect: inspectPort, record: values.record, token, stately: values.stately, lookup: (id) => byId.get(id), dataDir, note: (m) => void process.stderr.write(`allocrun run: ${m}\n`) });
    if (inspection.statelyUrl) process.stderr.write(`stately: @statelyai/inspect stream at ${inspection.statelyUrl}\n`);

    const { view, tty } = chooseView(values.json === true);

    const runners: AllocRunner[] = allocs.map((spec) => createAllocRunner(spec, { dataDir, inspect: inspection.inspect, machineClock: inspection.machineClock }));
    runners.forEach((r, i) => byId.set(allocs[i]!.id, r));
    const persisters: StatePersister[] = [];
    let saveErrorShown = false;
    view.start({ title: `running ${jobFile}`, jobFile, dataDir, allocs, inspectUrl: inspection.url, record: values.record });
    runners.forEach((runner, i) => {
      const spec = allocs[i]!;
      const persister = new StatePersister(store, spec, runner, (err) => {
        // One note is enough: the same disk problem would repeat on every state change.
        if (!saveErrorShown) view.note(`warning: cannot save state: ${(err as Error).message}`);
        saveErrorShown = true;
      });
      persisters.push(persister);
      watchRunner(view, spec, runner);
      runner.state$.subscribe(() => persister.update());
    });

    const output = view.output ? followTaskOutput(allocs, dataDir, view) : undefined;

    // First signal: stop the allocations the way Nomad does (KILL runs poststop tasks). Second: give up.
    let interrupts = 0;
    let forceExit!: () => void;
    const forced = new Promise<'forced'>((res) => (forceExit = () => res('forced')));
    const onSignal = (signal: NodeJS.Signals) => {
      interrupts++;
      if (interrupts === 1) {
        view.note(`${signal}: killing ${runners.length} allocation(s); poststop tasks will run (Ctrl-C again to exit at once)`);
        for (const r of runners) r.send({ type: 'KILL' });
      } else {
        view.note(`${signal} again: exiting without waiting`);
        forceExit();
      }
    };
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);

    const errors = new Map<number, string>();
    const finished = Promise.all(
      runners.map((r, i) =>
        r.done.catch((err: unknown) => {
          errors.set(i, (err as Error)?.message ?? String(err));
          return r.getState();
        }),
      ),
    );
    for (const r of runners) r.start();

    try {
      const outcome = await Promise.race([finished, forced]);
      const wasForced = outcome === 'forced';
      if (wasForced) {
        // Record where each allocation is before detaching from it: `allocrun agent` resumes from there.
        await Promise.all(persisters.map((p) => p.freeze()));
        for (const r of runners) {
          r.send({ type: 'SHUTDOWN' });
          r.stop();
        }
      } else {
        persisters.forEach((p) => p.update());
        await Promise.all(persisters.map((p) => p.settled()));
      }
      const results = runners.map((r, i) => ({ alloc: allocs[i]!, state: r.getState(), ...(errors.has(i) ? { error: errors.get(i)! } : {}) }));
      if (!wasForced) await output?.drain();
      const failed = results.some((r) => r.error !== undefined || r.state.clientStatus !== 'complete');
      const exitCode = wasForced ? FORCED_EXIT : failed ? 1 : 0;
      view.finish({ dataDir, results, exitCode, forced: wasForced });
      // Someone watching the visualizer wants to look at the end state before the page goes away: while a
      // terminal can press Ctrl-C (stdout, or stdin when the output is piped: `| tee run.log`), until it does;
      // with no terminal at all (scripts, CI), while a page is open, else it exits as before.
      const terminal = tty || process.stdin.isTTY === true;
      const watched = !terminal && (inspection.openPages?.() ?? 0) > 0;
      if (inspection.url && (terminal || watched) && !wasForced) {
        process.off('SIGINT', onSignal);
        process.off('SIGTERM', onSignal);
        if (terminal) (tty ? process.stdout : process.stderr).write(`inspector still serving at ${inspection.url} (Ctrl-C to exit)\n`);
        else process.stderr.write(`allocrun run: inspector still serving at ${inspection.url} while a page is open (close it, or SIGINT/SIGTERM, to exit)\n`);
        await new Promise<void>((res) => {
          process.once('SIGINT', () => res());
          process.once('SIGTERM', () => res());
          if (!terminal) void inspection.whenNoPages?.().then(() => res());
        });
      }
      return exitCode;
    } finally {
      output?.stop();
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
      await inspection.close();
    }
  },
};
