/** xz-decompress's types name only its ESM export; Node's ESM loader gives its CommonJS bundle as a default. */
declare module 'xz-decompress' {
  const xz: { XzReadableStream: new (compressed: ReadableStream<Uint8Array>) => ReadableStream<Uint8Array> };
  export default xz;
}
