/** Why fetching an artifact failed: a message a user can act on; `recoverable` lets the restart policy retry. */
export class ArtifactError extends Error {
  readonly code = 'ErrArtifact';
  constructor(message: string, readonly recoverable = true) {
    super(message);
    this.name = 'ArtifactError';
  }
}

/** The message of any error, for wrapping into an ArtifactError. */
export function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
