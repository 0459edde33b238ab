/** unbzip2-stream ships no types: a function returning the decompressing through-stream. */
declare module 'unbzip2-stream' {
  import type { Duplex } from 'node:stream';
  export default function unbzip2(): Duplex;
}
