/** go-getter's checksum step: the fetched file (the archive itself, before unpacking) against the job's digest. */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { pipeline } from 'node:stream/promises';
import type { Checksum } from '../jobspec/artifact-source.ts';
import { ArtifactError } from './errors.ts';

/** The hex digest of a file. */
export async function digestOf(path: string, type: Checksum['type']): Promise<string> {
  const hash = createHash(type);
  await pipeline(createReadStream(path), hash);
  return hash.digest('hex');
}

/** Throws an ArtifactError naming both digests when `path` does not hash to `want`. */
export async function verifyChecksum(path: string, want: Checksum, source: string): Promise<void> {
  const got = await digestOf(path, want.type);
  if (got !== want.hex) throw new ArtifactError(`checksums did not match for ${source}: expected ${want.type}:${want.hex}, got ${want.type}:${got}`);
}
