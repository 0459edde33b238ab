/**
 * `allocrun agent --data-dir D`: the long-running agent. On start it restores every unfinished allocation
 * the data dir holds (reattaching to workloads still running); SIGTERM or Ctrl-C shuts it down
 * gracefully, leaving tasks running for the next agent, as Nomad's client does across restarts.
 */
import { mkdir, readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { checkDataDirPrivate, resolveAgentToken, TOKEN_ON_COMMAND_LINE_WARNING, tokenSourceOf } from '../api/agent-token.ts';
import { refuseBeforeServing, refuseHttpAddress, serveAgentApi, type ServedApi } from '../api/serve-agent-api.ts';
import { ServiceRegistry } from '../services/index.ts';
import { variablesOf } from '../variables/variable-store.ts';
import { createAgent, type Agent } from '../runtime/create-agent.ts';
import type { AllocSpec } from '../jobspec/types.ts';
import { AgentStore } from '../state/agent-store.ts';
import { loadNodeId } from '../api/node.ts';
import { loadDynamicNodeMeta, mergedNodeMeta } from '../api/node-meta.ts';
import { localNodeInfo } from '../env/node-info.ts';
import { openPassage } from '../state/file-store.ts';
import { taskUserProblem, userSwitching } from '../drivers/raw-exec/task-user.ts';
import { installLastResort } from '../runtime/last-resort.ts';
import { importFileState, type ImportReport } from '../api/import-file-state.ts';
import { CheckStore } from '../checks/check-store.ts';
import { checkPersistence, loadCheckResults } from '../checks/check-persistence.ts';
import { agentDatacenter } from './agent-datacenter.ts';
import { parseCommand, type Command } from './args.ts';
import { UsageError } from './errors.ts';
import { ARTIFACT_FLAGS_HELP, ARTIFACT_FLAG_OPTIONS, artifactConfigFromFlags } from './artifact-flags.ts';
import { GC_FLAGS_HELP, GC_FLAG_OPTIONS, gcConfigFromFlags } from './gc-flags.ts';
import { NODE_FLAGS_HELP, NODE_FLAG_OPTIONS, nodeSettingsFromFlags } from './agent-node-flags.ts';
import { inspectorToken, openInspection, parsePort } from './inspect-seam.ts';
import { openAgentUi, uiNote } from './agent-ui.ts';
import { chooseView, followTaskOutput, watchRunner } from './watch.ts';

/** Exit status when a second signal cuts the shutdown short: 128 + SIGINT, as shells report it. */
const FORCED_EXIT = 130;

/** The `agent` command. */
export const agentCommand: Command = {
  name: 'agent',
  usage: 'agent --data-dir D [--http ADDR] [--token-file F | --token T] [--dc NAME] [--meta K=V]... [--node-class NAME] [--node-pool NAME] [--task-user NAME] [--artifact-* LIMIT] [--gc-* N] [--no-ui] [--inspect[=PORT] [--inspect-token T] [--stately]] [--record FILE] [--json]',
  details: `
Run as a long-lived agent: restore the allocations of a data dir, stop leaving tasks running.

Restores every unfinished allocation found in the data dir (reattaching to processes that are
still running) and shows their tasks live, like 'run'. SIGTERM or Ctrl-C shuts the agent down
gracefully: state is saved and tasks keep running, for the next agent to pick up. A second
signal exits at once (status 130).

A run stopped with two Ctrl-Cs leaves its tasks running; an agent on its data dir takes them over.

The agent's UI, the visualizer, is at /ui on the same addresses, behind the same tokens: open
http://HOST:PORT/ui/?token=TOKEN once (the token then stays in a browser-session cookie).

The agent serves Nomad's HTTP API (jobs, allocations, logs, the event stream) on a unix socket in
the data dir (D/agent.sock, mode 0600): 'allocrun job run FILE --data-dir D' and the other 'job'
and 'alloc' commands talk to it. With --http it also listens on TCP; every request there must
send the agent's token in X-Nomad-Token. The token comes from --token-file (or $ALLOCRUN_TOKEN_FILE),
else --token (or $ALLOCRUN_TOKEN), else D/agent-token, generated (256 bits, mode 0600) when missing.
A token shorter than 16 characters is refused, and so is a token file, or a data dir, that its
group or others can read or write (chmod 600 FILE, chmod 700 D). A non-loopback address is refused
without a given token. Prefer --token-file: a --token on the command line is readable by every
local user (ps, /proc/PID/cmdline).

Flags:
  -d, --data-dir D    where allocations and their state live (required; default: $ALLOCRUN_DATA_DIR)
  --http ADDR         also serve the API on HOST:PORT, e.g. 127.0.0.1:4646 (port 0: any free one)
  --token-file F      read the token TCP clients must send from F (mode 0600; default: $ALLOCRUN_TOKEN_FILE)
  --token T           the token itself (default: $ALLOCRUN_TOKEN); visible to other users, prefer --token-file
  --dc NAME           the node's datacenter (default: dc1, as Nomad's); jobs are placed only when their
                      datacenters name it (or a glob matching it; no datacenters means "*")
${NODE_FLAGS_HELP}
  --task-user NAME    run raw_exec tasks that name no "user" as NAME (the agent must run as root);
                      without it they run as the agent's user
${ARTIFACT_FLAGS_HELP}
${GC_FLAGS_HELP}
  --no-ui             do not serve the UI at /ui (nor keep its history: the inspection stream
                      costs the runners CPU)
  --inspect[=PORT]    also serve the visualizer on a port of its own (it is always at /ui on
                      the API's addresses, behind the API's tokens); without PORT, the
                      port is kept in D/inspect-port across restarts
  --inspect-token T   the visualizer's token (default: kept in D/inspect-token, 0600,
                      so a page left open reconnects after an agent restart)
  --stately           also serve the stream in @statelyai/inspect's format (printed URL)
  --record FILE       record the inspection stream and every input into the machines to FILE
                      (see 'allocrun replay', and 'replay --check' to re-drive it)
  --json              one JSON object per line for every task event and state change
  -h, --help          show this help

Example:
  allocrun agent --data-dir /var/lib/allocrun`,
  async run(argv) {
    // parseArgs has no optional values: a bare --inspect would swallow the next argument as its port.
    const args = argv.map((a) => (a === '--inspect' ? '--inspect=' : a));
    const parsed = parseCommand(
      this,
      args,
      { 'data-dir': { type: 'string', short: 'd' }, inspect: { type: 'string' }, 'inspect-token': { type: 'string' }, stately: { type: 'boolean' }, record: { type: 'string' }, json: { type: 'boolean' }, http: { type: 'string' }, 'no-ui': { type: 'boolean' }, token: { type: 'string' }, 'token-file': { type: 'string' }, 'task-user': { type: 'string' }, dc: { type: 'string' }, ...NODE_FLAG_OPTIONS, ...ARTIFACT_FLAG_OPTIONS, ...GC_FLAG_OPTIONS },
      { min: 0, max: 0, names: '' },
    );
    if (!parsed) return 0;
    const { values } = parsed;
    // The same default as the client commands: $ALLOCRUN_DATA_DIR.
    const dataDirFlag = values['data-dir'] || process.env.ALLOCRUN_DATA_DIR;
    if (!dataDirFlag) throw new UsageError('agent: --data-dir D is required (where allocations and their state live; or set ALLOCRUN_DATA_DIR)', 'agent');
    const inspectPort = values.inspect === undefined ? undefined : values.inspect === '' ? null : parsePort('agent', '--inspect', values.inspect);
    const dataDir = resolve(dataDirFlag);
    // Everything the flags alone can refuse is refused before the data dir is made: a refused start leaves nothing.
    if (values.token !== undefined) process.stderr.write(`allocrun agent: ${TOKEN_ON_COMMAND_LINE_WARNING}\n`);
    const tokenSource = values.http === undefined ? undefined : tokenSourceOf({ token: values.token, tokenFile: values['token-file'] });
    // A given token is checked now; the data dir's own token file is the API's to read or make, later.
    const apiToken = tokenSource && resolveAgentToken(tokenSource, dataDir);
    // Refused here, not at each task's start: an agent that cannot switch to it would fail every task.
    const taskUser = values['task-user'];
    const taskUserWhy = taskUser === undefined ? undefined : taskUserProblem(taskUser, 'leave out --task-user, or run the agent as root');
    if (taskUserWhy) throw new UsageError(`agent: --task-user ${JSON.stringify(taskUser)}: ${taskUserWhy}`, 'agent');
    const datacenter = agentDatacenter(values.dc);
    const { nodeClass, nodePool, nodeMeta } = nodeSettingsFromFlags(values);
    const artifacts = artifactConfigFromFlags(values);
    const gc = gcConfigFromFlags(values);
    refuseHttpAddress({ http: values.http, token: apiToken });
    await mkdir(dataDir, { recursive: true, mode: 0o700 });
    // Refused before anything is restored: a data dir or a given token others can reach (agent-token.ts).
    checkDataDirPrivate(dataDir);
    // An agent that runs tasks as other users lets them pass through to their task dirs, by path only.
    if (!userSwitching().cannotSwitch()) await openPassage(dataDir);
    // Also before anything is restored: another agent serving this data dir, or an --http it would refuse.
    await refuseBeforeServing({ dataDir, http: values.http, token: apiToken });

    // The agent's one store. A damaged one stops the agent here, named, before anything runs or is written.
    const store = AgentStore.open(dataDir);
    let imported: ImportReport | undefined;
    try {
      imported = await importFileState(dataDir, store);
    } catch (err) {
      await store.close();
      throw err;
    }
    // From here on, an error a hook or driver leaves unhandled is recorded on its task and logged; the
    // agent, and every other allocation, carries on.
    const removeLastResort = installLastResort();
    const runnerRecords = store.runners();
    // Service check results as the last agent left them (Nomad restores its checkstore), kept as they change.
    const note = (message: string) => void process.stderr.write(`allocrun agent: ${message}\n`);
    const checkWrites = checkPersistence(store, note);
    const checkStore = new CheckStore(checkWrites);
    const keptChecks = loadCheckResults(store, note);
    for (const [allocId, results] of keptChecks) checkStore.restore(allocId, results);
    // The specs of what the agent will restore, for the view (the runners do not expose theirs).
    const records = await runnerRecords.list();
    const specs = new Map<string, AllocSpec>(records.map((r) => [r.spec.id, r.spec]));
    let agent: Agent | undefined;
    let api: ServedApi | undefined;
    if (values.stately && inspectPort === undefined) throw new UsageError('agent: --stately needs --inspect (it is served by the visualizer\'s server)', 'agent');
    const token = inspectPort === undefined ? undefined : await inspectorToken(values['inspect-token'], dataDir, 'agent');
    // The UI at /ui reads the runners from the start: a page opened later gets the history (issue 29).
    // --no-ui: nothing read, nothing kept (the stream costs the runners CPU); /ui then says so.
    const ui = values['no-ui'] ? undefined : await openAgentUi((id) => agent?.get(id));
    const inspection = await openInspection({ inspect: inspectPort, record: values.record, token, stately: values.stately, lookup: (id) => agent?.get(id), feed: ui?.feed, dataDir, note: (m) => void process.stderr.write(`allocrun agent: ${m}\n`) });
    if (inspection.statelyUrl) process.stderr.write(`stately: @statelyai/inspect stream at ${inspection.statelyUrl}\n`);
    // Installed before anything runs: a SIGTERM during restore must still end in a graceful shutdown.
    let signals = 0;
    let onFirst!: (signal: NodeJS.Signals) => void;
    let onSecond!: () => void;
    const stopRequested = new Promise<NodeJS.Signals>((res) => (onFirst = res));
    const forced = new Promise<'forced'>((res) => (onSecond = () => res('forced')));
    const onSignal = (signal: NodeJS.Signals) => (++signals === 1 ? onFirst(signal) : onSecond());
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
    // An agent with nothing to run still runs: nothing else keeps the event loop alive while it waits.
    const keepAlive = setInterval(() => {}, 1 << 30);
    const { view } = chooseView(values.json === true);
    try {
      // Tasks see the node the API shows (${node.unique.id} is its ID in the store), not a host-derived one.
      // Its meta is --meta with what `node meta apply` set over it (kept in the store: node-meta.ts).
      const meta = mergedNodeMeta(nodeMeta, loadDynamicNodeMeta(store));
      const node = localNodeInfo({ id: await loadNodeId(store), datacenter, meta, ...(nodeClass !== undefined && { class: nodeClass }), ...(nodePool !== undefined && { pool: nodePool }) });
      // The Nomad-native service catalog: the allocations register in it, the API serves it.
      const services = new ServiceRegistry();
      // Templates read the variables the API writes (nomadVar), each task only what Nomad lets it read.
      const variables = variablesOf(store);
      agent = createAgent({ dataDir, inspect: inspection.inspect, machineClock: inspection.machineClock, store: runnerRecords, node, checks: { store: checkStore }, services, variables, ...(taskUser !== undefined && { taskUser }), artifacts, gc: gc.client });
      if (imported) {
        process.stderr.write(`allocrun agent: imported the file-based state of ${dataDir} into ${store.path}: ${imported.jobs} jobs, ${imported.allocs} allocations, ${imported.runners} runner records (the old files were renamed *.imported)\n`);
        for (const line of imported.skipped) process.stderr.write(`allocrun agent: not imported: ${line}\n`);
      }
      const restored = await agent.start();
      // Results of allocations that are not running any more are forgotten, as their preKill would have.
      for (const allocId of keptChecks.keys()) if (!agent.get(allocId)) checkStore.purge(allocId);
      // Damaged records were moved aside; say which, and carry on with the rest.
      for (const err of agent.restoreErrors) process.stderr.write(`allocrun agent: ${err.message}\n`);
      const allocs = restored.map((r) => specs.get(r.actor.id)).filter((s): s is AllocSpec => s !== undefined);
      view.start({ title: 'agent restored', dataDir, allocs, inspectUrl: inspection.url });
      restored.forEach((runner) => {
        const spec = specs.get(runner.actor.id);
        if (spec) watchRunner(view, spec, runner);
      });
      const output = view.output ? followTaskOutput(allocs, dataDir, view) : undefined;
      if (allocs.length === 0) view.note(`no allocations to restore in ${dataDir}; waiting (SIGTERM or Ctrl-C to stop)`);
      // Finished allocations stay visible through the API, as Nomad keeps them until garbage collection.
      const finished = (await runnerRecords.list()).filter((r) => !restored.some((x) => x.actor.id === r.spec.id));
      api = await serveAgentApi({
        agent,
        dataDir,
        store,
        version: await packageVersion(),
        http: values.http,
        token: apiToken,
        services,
        gc: gc.server,
        datacenter,
        nodeClass,
        nodePool,
        nodeMeta,
        found: [...restored.map((runner) => ({ spec: runner.actor.getSnapshot().context.alloc, state: runner.getState(), updatedAt: Date.now(), runner })), ...finished],
        ...(ui && { ui }),
      });
      api.registry.placed$.subscribe(({ spec, runner }) => watchRunner(view, spec, runner));
      view.note(`API listening on ${api.socketPath}`);
      if (api.url) view.note(`API listening on ${api.url} (X-Nomad-Token required; ${api.tokenFrom})`);
      if (ui) view.note(uiNote(api));

      const signal = await stopRequested;
      view.note(`${signal}: shutting down; tasks keep running (${signal === 'SIGINT' ? 'Ctrl-C' : 'signal'} again to exit at once)`);
      await api.close();
      const outcome = await Promise.race([agent.shutdown().then(() => 'done' as const), forced]);
      output?.stop();
      const results = restored.map((r) => ({ alloc: specs.get(r.actor.id)!, state: r.getState() })).filter((r) => r.alloc);
      const exitCode = outcome === 'forced' ? FORCED_EXIT : 0;
      view.finish({ dataDir, results, exitCode, forced: outcome === 'forced', detached: true });
      return exitCode;
    } finally {
      clearInterval(keepAlive);
      await api?.close().catch(() => undefined);
      await checkWrites.flush();
      await store.close().catch(() => undefined);
      removeLastResort();
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
      await inspection.close();
      ui?.feed.close();
    }
  },
};

/** allocrun's version, for `/v1/agent/self`. */
async function packageVersion(): Promise<string> {
  const pkg = JSON.parse(await readFile(new URL('../../package.json', import.meta.url), 'utf8')) as { version?: string };
  return pkg.version ?? 'unknown';
}
