/**
 * Lists answered to blocking queries, built once per index of their scope and serialised once per query:
 * when a change wakes fifty clients blocked on `/v1/allocations?index=N`, the list is built and turned into
 * JSON for the first of them and the others get the same text. The scope's index says when an entry is
 * stale: everything a list shows moves its scope's index, so the same index means the same list.
 */
import { constants, gzip } from 'node:zlib';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { blockingQuery, type ApiContext } from './context.ts';
import { applyListOptions } from './query-options.ts';

/** Query parameters that say when to answer, not what: they do not tell two answers apart. */
const NOT_CONTENT = new Set(['index', 'wait', 'stale']);

/** Both memos stop growing past these: the oldest entries go first. */
const MAX_ENTRIES = 512;
const MAX_BYTES = 32 * 1024 * 1024;

/**
 * Bodies from this size on are sent gzipped to a client that accepts it, as Nomad's agent does (its
 * gziphandler's minimum size); Go's HTTP client asks for gzip unless told not to.
 */
export const GZIP_MIN_BYTES = 1400;

interface Body {
  index: number;
  body: string;
  nextToken?: string;
  /** The body gzipped, started for the first client that accepts it and shared as the text is. */
  gzipped?: Promise<Buffer>;
}

/** The built lists (per scope) and the serialised answers (per scope and query), each kept for one index. */
export class ListCache {
  private readonly lists = new Map<string, { index: number; items: readonly { ID?: unknown }[] }>();
  private readonly bodies = new Map<string, Body>();
  private bytes = 0;

  /**
   * The JSON of the list of `scope` at `index` with the query's prefix and list options applied (and the
   * next page's token); `build` makes the whole list and runs only when no answer at `index` is kept.
   */
  answer(scope: string, index: number, query: Record<string, unknown>, build: () => readonly { ID?: unknown }[]): Body {
    const key = `${scope}?${queryKey(query)}`;
    const kept = this.bodies.get(key);
    if (kept?.index === index) return kept;
    let list = this.lists.get(scope);
    if (list?.index !== index) {
      list = { index, items: build() };
      remember(this.lists, scope, list);
    }
    const prefix = typeof query['prefix'] === 'string' ? query['prefix'] : '';
    const matching = prefix === '' ? list.items : list.items.filter((i) => typeof i.ID === 'string' && i.ID.startsWith(prefix));
    const { items, nextToken } = applyListOptions(matching, query);
    const body: Body = { index, body: listText(items), ...(nextToken !== undefined && { nextToken }) };
    if (kept) this.bytes -= kept.body.length;
    this.bytes += body.body.length;
    remember(this.bodies, key, body);
    while (this.bytes > MAX_BYTES && this.bodies.size > 1) {
      const [oldest, entry] = this.bodies.entries().next().value!;
      this.bodies.delete(oldest);
      this.bytes -= entry.body.length;
    }
    return body;
  }
}

/**
 * The texts of entries a StubMemo made, each kept with its entry (null: made, not yet serialised). A memo's entry
 * is never changed once made (a change makes a new one), so its text stands for as long as it does: a list rebuilt
 * for one changed entry of two hundred serialises that one, not all (JSON.stringify of the whole list was the
 * largest item of the agent's profile under 50 watchers, issue #31).
 */
const stubTexts = new WeakMap<object, string | null>();

/** `JSON.stringify(items)`, from the kept texts of the memo's entries (the same text: an array's items joined by commas). */
function listText(items: readonly unknown[]): string {
  const parts = new Array<string>(items.length);
  for (let i = 0; i < items.length; i++) {
    const item = items[i];
    const kept = typeof item === 'object' && item !== null ? stubTexts.get(item) : undefined;
    if (typeof kept === 'string') parts[i] = kept;
    else {
      // An array's JSON writes null for what JSON.stringify leaves out (undefined, functions).
      const text = JSON.stringify(item) ?? 'null';
      if (kept === null) stubTexts.set(item as object, text);
      parts[i] = text;
    }
  }
  return `[${parts.join(',')}]`;
}

/** Sets `key` as the newest entry, dropping the oldest past MAX_ENTRIES. */
function remember<V>(map: Map<string, V>, key: string, value: V): void {
  map.delete(key);
  map.set(key, value);
  if (map.size > MAX_ENTRIES) map.delete(map.keys().next().value!);
}

/** The query's content parameters in a fixed order. */
function queryKey(query: Record<string, unknown>): string {
  return JSON.stringify(Object.keys(query).filter((k) => !NOT_CONTENT.has(k)).sort().map((k) => [k, query[k]]));
}

/**
 * A list route's blocking query: waits as `blockingQuery` does, then answers the list of `scope` from
 * `cache` at the scope's index, which is also the `X-Nomad-Index` it answers with.
 */
export async function blockingList(
  ctx: ApiContext,
  cache: ListCache,
  req: FastifyRequest,
  reply: FastifyReply,
  scope: string,
  indexOf: () => number,
  build: () => readonly { ID?: unknown }[],
): Promise<string | Buffer> {
  await blockingQuery(ctx, req, reply, indexOf);
  // Read again with the build, in the same turn: the body and the index it is kept under are one snapshot.
  const index = indexOf();
  const answer = cache.answer(scope, index, req.query as Record<string, unknown>, build);
  void reply.header('X-Nomad-Index', String(Math.max(index, 1))).type('application/json; charset=utf-8');
  if (answer.nextToken !== undefined) void reply.header('X-Nomad-NextToken', answer.nextToken);
  if (answer.body.length < GZIP_MIN_BYTES) return answer.body;
  void reply.header('Vary', 'Accept-Encoding');
  if (!acceptsGzip(req.headers['accept-encoding'])) return answer.body;
  answer.gzipped ??= gzipped(answer.body);
  const zipped = await answer.gzipped;
  void reply.header('Content-Encoding', 'gzip');
  return zipped;
}

/**
 * `body` gzipped in libuv's thread pool, not on the event loop: a list of 200 allocations takes about a
 * millisecond to compress, once per change, and on the loop that millisecond delayed every registration
 * answered behind it (a twentieth of the agent's loop under 50 watchers, issue #31). Level 1: lists are
 * repetitive JSON, so the fastest level already shrinks them about tenfold.
 */
function gzipped(body: string): Promise<Buffer> {
  return new Promise((resolve, reject) => gzip(body, { level: constants.Z_BEST_SPEED }, (err, out) => (err ? reject(err) : resolve(out))));
}

/** Whether an Accept-Encoding header takes gzip: `gzip` listed without `;q=0`, or else `*` without it. */
export function acceptsGzip(header: string | string[] | undefined): boolean {
  const text = Array.isArray(header) ? header.join(',') : (header ?? '');
  const weights = new Map<string, number>();
  for (const part of text.split(',')) {
    const [coding, ...params] = part.trim().toLowerCase().split(';').map((p) => p.trim());
    const q = params.find((p) => p.startsWith('q='));
    if (coding) weights.set(coding, q === undefined ? 1 : Number(q.slice(2)));
  }
  return (weights.get('gzip') ?? weights.get('*') ?? 0) > 0;
}

/**
 * Each entry's list form, kept with the index it was made at: a list rebuilt for a change remakes (and
 * serialises again) only the entries that change touched. `at` must move whenever anything the form shows
 * changes, and a form, once made, is not changed (a list's text keeps its first serialisation).
 */
export class StubMemo<E extends object, S> {
  private readonly made = new WeakMap<E, { at: number; stub: S }>();

  constructor(private readonly make: (entry: E) => S) {}

  /** The form of `entry` as of `at`. */
  of(entry: E, at: number): S {
    const kept = this.made.get(entry);
    if (kept?.at === at) return kept.stub;
    const stub = this.make(entry);
    this.made.set(entry, { at, stub });
    if (typeof stub === 'object' && stub !== null) stubTexts.set(stub, null);
    return stub;
  }
}
