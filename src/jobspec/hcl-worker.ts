/**
 * The worker thread that runs HashiCorp's HCL parser (`@cdktf/hcl2json`, Go compiled to WASM). The
 * parser blocks the thread it runs on (a large heredoc takes seconds, growing quadratically), so it runs
 * here where the main thread can stop it with `worker.terminate()`. One request at a time; the Go runtime
 * is loaded once per worker and reused. See hcl-parser.ts for the main-thread side.
 */
import { createRequire } from 'node:module';
import { parentPort } from 'node:worker_threads';

/** A parse request: the text and the file name the parser puts in its diagnostics. */
export interface HclRequest {
  id: number;
  filename: string;
  text: string;
}

/**
 * The answer: hcl2json's value, or the message of what it threw (a diagnostic or a parser failure); and
 * once, before any answer, `ready` when the Go runtime has loaded (its start-up is not a parse's time).
 */
export type HclResponse = { id: number; ok: true; value: unknown } | { id: number; ok: false; message: string } | { ready: true };

type Hcl2Json = (filename: string, contents: string) => Promise<unknown>;

const require = createRequire(import.meta.url);
const { parse } = require('@cdktf/hcl2json/lib/bridge.js') as { parse: Hcl2Json };
const port = parentPort;
if (!port) throw new Error('hcl-worker runs as a worker thread (see hcl-parser.ts)');

// One empty parse starts the Go runtime, so a request's timeout measures parsing only.
await parse('warm-up.hcl', '').catch(() => undefined);
port.postMessage({ ready: true } satisfies HclResponse);

port.on('message', (req: HclRequest) => {
  parse(req.filename, req.text).then(
    (value) => port.postMessage({ id: req.id, ok: true, value } satisfies HclResponse),
    (err: unknown) => port.postMessage({ id: req.id, ok: false, message: err instanceof Error ? err.message : String(err) } satisfies HclResponse),
  );
});
