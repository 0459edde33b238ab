/**
 * artifacts: fetches the task's artifact blocks into its directory before it starts (Nomad's artifact_hook).
 * It records `Downloading Artifacts`, fetches each artifact not already fetched, and marks each one in its
 * state as it lands; a failure is a recoverable `Failed Artifact Download` naming the artifact and the
 * reason, so the restart policy retries it. Once all are fetched the hook is Done: later starts of the task,
 * and an agent restored from its snapshot, do not fetch them again. A hook run again (an agent that died
 * mid-fetch) starts over cleanly: fetches land through a work dir and a rename, so nothing is half-written.
 */
import { createHash } from 'node:crypto';
import { lchown, lstat, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { artifactConfigOf, type ArtifactConfig } from '../artifacts/config.ts';
import { resolveDestination } from '../artifacts/confine.ts';
import { interpolateValue } from '../env/interpolate.ts';
import { resolveTaskUser } from '../drivers/raw-exec/task-user.ts';
import type { ArtifactSpec } from '../jobspec/types.ts';
import { HookError, type HookEnv, type TaskHook } from './types.ts';

/** Nomad's event types (structs.TaskDownloadingArtifacts, structs.TaskArtifactDownloadFailed). */
const DOWNLOADING = 'Downloading Artifacts';
const DOWNLOAD_FAILED = 'Failed Artifact Download';

/** What the hook needs from the agent. */
export interface ArtifactHookOptions {
  /** The client's artifact limits (Nomad's `artifact` client block); Nomad's defaults where unset. */
  config?: Partial<ArtifactConfig>;
  /** The user tasks run as when they name none (the agent's --task-user): `chown` gives files to it. */
  taskUser?: string;
}

/** Nomad's artifact.Hash(): one artifact's identity in the hook's state, over every field. */
export function artifactId(a: ArtifactSpec): string {
  const sorted = (m?: Record<string, string>) => (m ? Object.entries(m).sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0)) : []);
  const key = [a.source, a.destination, a.mode, sorted(a.options), sorted(a.headers), a.insecure === true, a.chown === true];
  return createHash('sha256').update(JSON.stringify(key)).digest('hex').slice(0, 32);
}

/** The ids a previous run recorded as fetched. */
function fetchedBefore(previous: unknown): Record<string, string> {
  if (typeof previous !== 'object' || previous === null) return {};
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(previous)) if (typeof v === 'string' && v !== '') out[k] = v;
  return out;
}

/** The artifact with `${...}` resolved from the task's environment, as Nomad's getter does before fetching. */
function interpolated(a: ArtifactSpec, env: HookEnv): ArtifactSpec {
  return interpolateValue(a, (key) => (Object.hasOwn(env, key) ? env[key] : undefined));
}

/** A source as events show it: a password in the URL (`https://user:pass@host`) is not repeated. */
export function withoutPassword(source: string): string {
  return source.replace(/^([a-z][a-z0-9+.-]*:\/\/[^/?#@:]*:)[^/?#@]*@/i, '$1REDACTED@');
}

/** Gives every file under `path` to `uid:gid` without following links (Nomad's chownDestination). */
async function chownTree(path: string, uid: number, gid: number): Promise<void> {
  await lchown(path, uid, gid);
  const st = await lstat(path);
  if (!st.isDirectory()) return;
  for (const name of await readdir(path)) await chownTree(join(path, name), uid, gid);
}

/** The artifacts hook; `opts` carries the agent's artifact limits and task user. */
export function artifactHook(opts: ArtifactHookOptions = {}): TaskHook {
  const config = artifactConfigOf(opts.config);
  return {
    name: 'artifacts',
    async prestart(req, res, abort) {
      const artifacts = req.task.artifacts ?? [];
      if (artifacts.length === 0) {
        res.done = true;
        return;
      }
      const previous = fetchedBefore(req.previousState);
      const state: Record<string, string> = {};
      res.state = state;
      const downloading = { type: DOWNLOADING };
      if (req.emitEvent) req.emitEvent(downloading);
      else res.events = [downloading];
      // Loaded on first use: the fetchers and unpackers (undici, tar, yauzl, xz) cost every task nothing until then.
      const { getArtifact, removeStaleWorkDirs } = await import('../artifacts/get-artifact.ts');
      await removeStaleWorkDirs(req.taskDir);
      for (const artifact of artifacts) {
        const id = artifactId(artifact);
        if (previous[id]) {
          state[id] = previous[id]!;
          continue;
        }
        const a = interpolated(artifact, req.env);
        try {
          // Whether the files may be given away is settled before anything is fetched.
          const owner = a.chown ? ownerFor(req.task.user ?? opts.taskUser, req.task.name) : undefined;
          await getArtifact(a, req.taskDir, config, abort);
          if (owner) await chownTree(await resolveDestination(req.taskDir, a.destination), owner.uid, owner.gid);
        } catch (err) {
          abort.throwIfAborted();
          const reason = `failed to download artifact ${JSON.stringify(withoutPassword(artifact.source))}: ${(err as Error)?.message ?? String(err)}`;
          const recoverable = (err as { recoverable?: unknown }).recoverable !== false;
          throw new HookError(reason, recoverable, DOWNLOAD_FAILED, { download_error: reason });
        }
        state[id] = '1';
      }
      res.done = true;
    },
  };
}

/** `chown = true`: only an agent running as root may give files away, and only to a known task user. */
function ownerFor(user: string | undefined, task: string): { uid: number; gid: number } {
  const refuse = (why: string) => Object.assign(new Error(`chown = true: ${why}`), { recoverable: false });
  if (typeof process.getuid === 'function' && process.getuid() !== 0) throw refuse(`only an agent running as root can change owners (this one runs as uid ${process.getuid()}); remove chown or run the agent as root`);
  if (!user) throw refuse('the task runs as the agent\'s own user, so there is nobody to give the files to: set the task\'s "user"');
  return resolveTaskUser(task, user);
}
