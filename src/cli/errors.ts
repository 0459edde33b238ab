/** CLI errors: each carries a `code` and the process exit status it maps to, so main.ts never prints a stack. */

/** Any error the CLI reports as one message and an exit status. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly code: string,
    readonly exitCode: number = 1,
  ) {
    super(message);
    this.name = 'CliError';
  }
}

/** A bad command line (unknown flag, missing argument); exit status 2, like most Unix tools. */
export class UsageError extends CliError {
  constructor(
    message: string,
    /** The command whose usage to point at, e.g. `run`; empty for the top level. */
    readonly command = '',
  ) {
    super(message, 'ErrUsage', 2);
    this.name = 'UsageError';
  }
}

/** A feature whose module is not part of this build yet (visualizer, task manager, agent); exit status 2. */
export class UnavailableError extends CliError {
  constructor(message: string) {
    super(message, 'ErrUnavailable', 2);
    this.name = 'UnavailableError';
  }
}
