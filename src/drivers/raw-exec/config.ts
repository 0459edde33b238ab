/** The raw_exec task `config` block (Nomad's raw_exec driver schema), validated with errors naming the field. */
import type { TaskSpec } from '../../jobspec/types.ts';
import { RawExecConfigError } from './errors.ts';

/** A validated raw_exec config. */
export interface RawExecConfig {
  command: string;
  args: string[];
  /** Working directory; relative paths are inside the task dir. Defaults to the task dir. */
  workDir?: string;
}

// Nomad accepts these too; they tune cgroups and the OOM killer, which this driver does not manage.
const ACCEPTED_AND_IGNORED = new Set(['cgroup_v1_override', 'cgroup_v2_override', 'oom_score_adj', 'denied_envvars']);
const KNOWN = new Set(['command', 'args', 'work_dir', ...ACCEPTED_AND_IGNORED]);

/** Checks `task.config`; throws RawExecConfigError naming `config.<field>` for the first problem. */
export function parseRawExecConfig(task: TaskSpec): RawExecConfig {
  const config: unknown = task.config;
  if (config === null || typeof config !== 'object' || Array.isArray(config)) {
    throw new RawExecConfigError(task.name, 'config', 'must be an object with a "command"');
  }
  const c = config as Record<string, unknown>;
  for (const key of Object.keys(c)) {
    if (!KNOWN.has(key)) {
      throw new RawExecConfigError(task.name, `config.${key}`, `is not a raw_exec option (expected one of: ${[...KNOWN].join(', ')})`);
    }
  }
  if (typeof c.command !== 'string' || c.command.trim() === '') {
    throw new RawExecConfigError(task.name, 'config.command', `must be a non-empty string (got ${describe(c.command)})`);
  }
  let args: string[] = [];
  if (c.args !== undefined) {
    if (!Array.isArray(c.args)) throw new RawExecConfigError(task.name, 'config.args', `must be a list of strings (got ${describe(c.args)})`);
    args = c.args.map((a, i) => {
      if (typeof a === 'string') return a;
      // Numbers and booleans are common in YAML/JSON job files; Nomad stringifies them too.
      if (typeof a === 'number' || typeof a === 'boolean') return String(a);
      throw new RawExecConfigError(task.name, `config.args[${i}]`, `must be a string (got ${describe(a)})`);
    });
  }
  if (c.work_dir !== undefined && (typeof c.work_dir !== 'string' || c.work_dir === '')) {
    throw new RawExecConfigError(task.name, 'config.work_dir', `must be a non-empty string (got ${describe(c.work_dir)})`);
  }
  return { command: c.command, args, ...(typeof c.work_dir === 'string' ? { workDir: c.work_dir } : {}) };
}

function describe(v: unknown): string {
  if (v === undefined) return 'nothing';
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'a list';
  return typeof v === 'string' ? JSON.stringify(v) : typeof v;
}
