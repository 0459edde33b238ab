/** Hash and UUID functions of Nomad's jobspec2 table. */
import { createHash, randomUUID } from 'node:crypto';
import { fn, FunctionError, type HclFunction } from './types.ts';

const hash = (algorithm: string) => fn(['str:string'], ([s]) => createHash(algorithm).update(s as string, 'utf8').digest('hex'));

const NAMESPACES: Record<string, string> = {
  dns: '6ba7b810-9dad-11d1-80b4-00c04fd430c8',
  url: '6ba7b811-9dad-11d1-80b4-00c04fd430c8',
  oid: '6ba7b812-9dad-11d1-80b4-00c04fd430c8',
  x500: '6ba7b814-9dad-11d1-80b4-00c04fd430c8',
};

/** RFC 4122 version 5: SHA-1 of the namespace's bytes and the name. */
function uuidV5(namespace: string, name: string): string {
  const ns = NAMESPACES[namespace] ?? namespace;
  if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(ns)) throw new FunctionError(`uuidv5() namespace must be one of "dns", "url", "oid", "x500" or a UUID, got ${JSON.stringify(namespace)}`);
  const bytes = createHash('sha1').update(Buffer.from(ns.replace(/-/g, ''), 'hex')).update(name, 'utf8').digest().subarray(0, 16);
  bytes[6] = (bytes[6]! & 0x0f) | 0x50;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** In Nomad's table but needing what Node does not offer (bcrypt; RSA PKCS#1 v1.5 decryption is disabled in Node 20). */
const unavailable = (name: string, params: string[]) =>
  fn(params, () => {
    throw new FunctionError(`allocrun does not implement ${name}(); compute the value outside the job file and pass it in with -var`);
  }, name === 'bcrypt' ? 'cost:number' : undefined);

export const CRYPTO_FUNCTIONS: Record<string, HclFunction> = {
  md5: hash('md5'),
  sha1: hash('sha1'),
  sha256: hash('sha256'),
  sha512: hash('sha512'),
  // Non-deterministic, as in Nomad: every parse of the job gives a new one.
  uuidv4: fn([], () => randomUUID()),
  uuidv5: fn(['namespace:string', 'name:string'], ([ns, name]) => uuidV5(ns as string, name as string)),
  bcrypt: unavailable('bcrypt', ['str:string']),
  rsadecrypt: unavailable('rsadecrypt', ['ciphertext:string', 'privatekey:string']),
};
