/** The StateStore the in-process agent suites persist to: records held in memory, readable back directly. */
import type { AgentRecord } from '../../src/runtime/create-agent.ts';
import type { AllocRecord, StateStore } from '../../src/state/store.ts';

/** A store in memory: what was saved, in order, as JSON (what a file would hold). */
export class MemoryStore implements StateStore {
  readonly records = new Map<string, AgentRecord>();
  readonly saves: AgentRecord[] = [];
  /** A save in progress when another begins would interleave two writes of one record. */
  writing = 0;
  overlapped = false;
  /** Resolves the save in flight; a test holds saves back to see what queues behind them. */
  hold?: Promise<void>;
  failSaves = false;

  async save(id: string, record: AllocRecord): Promise<void> {
    if (this.writing > 0) this.overlapped = true;
    this.writing++;
    try {
      await this.hold;
      if (this.failSaves) throw new Error('disk full');
      const copy = JSON.parse(JSON.stringify(record)) as AgentRecord;
      this.saves.push(copy);
      this.records.set(id, copy);
    } finally {
      this.writing--;
    }
  }
  async load(id: string) {
    return this.records.get(id);
  }
  async list() {
    return [...this.records.values()];
  }
  async remove(id: string) {
    this.records.delete(id);
  }
}
