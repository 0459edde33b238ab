/**
 * The job registry on disk (`<data dir>/api-state.json`, 0600): jobs with their versions and what the
 * registry knows of each allocation (job, group, instance, version, desired status), so an agent that
 * restarts serves the same jobs and versions and keeps the allocations it restores attached to them. Task
 * states are not here: the agent's own store keeps those. Written atomically, newest state last.
 */
import { chmodSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AllocEntry, JobEntry } from './job-registry.ts';

/** What an allocation's registry record keeps across agent restarts. */
export type SavedAlloc = Omit<AllocEntry, 'runner' | 'lastState' | 'spec' | 'modifyIndex' | 'modifyTime'>;

/** The registry as saved. */
export interface SavedRegistry {
  index: number;
  jobs: JobEntry[];
  allocs: SavedAlloc[];
}

/** The file's name in the data dir. */
export const REGISTRY_FILE = 'api-state.json';

/** Reads and writes one data dir's registry file. */
export class RegistryFile {
  private readonly path: string;
  private pending: (() => SavedRegistry) | undefined;
  private scheduled = false;

  constructor(dataDir: string) {
    this.path = join(dataDir, REGISTRY_FILE);
  }

  /** The saved registry, or undefined when there is none (or it cannot be read: the agent starts empty). */
  load(): SavedRegistry | undefined {
    try {
      const saved = JSON.parse(readFileSync(this.path, 'utf8')) as SavedRegistry;
      return Array.isArray(saved.jobs) && Array.isArray(saved.allocs) && typeof saved.index === 'number' ? saved : undefined;
    } catch {
      return undefined;
    }
  }

  /** Saves `snapshot()` soon: changes in one tick are written once, with the newest state. */
  save(snapshot: () => SavedRegistry): void {
    this.pending = snapshot;
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => this.flush());
  }

  /** Writes a pending save now. */
  flush(): void {
    this.scheduled = false;
    const snapshot = this.pending;
    this.pending = undefined;
    if (!snapshot) return;
    const tmp = `${this.path}.tmp`;
    try {
      writeFileSync(tmp, JSON.stringify(snapshot()), { mode: 0o600 });
      chmodSync(tmp, 0o600);
      renameSync(tmp, this.path);
    } catch {
      // A full disk loses the registry's newest change, not the agent: the allocations keep running.
    }
  }
}
