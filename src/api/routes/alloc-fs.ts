/**
 * Nomad's allocation filesystem endpoints, as `nomad alloc fs` uses them: `ls`, `stat`, `cat`, `readat`
 * (offset and limit) and `stream` (Nomad's JSON frames, or raw bytes with `plain`), over the allocation's
 * directory and never outside it: a path is taken relative to the allocation directory (`/` is its root,
 * as in Nomad), `..` is refused, and a symlink that leads out of the directory is refused too.
 */
import { constants, createReadStream } from 'node:fs';
import { lstat, open, readdir, realpath, stat, type FileHandle } from 'node:fs/promises';
import { basename, join, sep } from 'node:path';
import { PassThrough } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { HttpError, type ApiContext } from '../context.ts';
import { queryBool } from '../schemas.ts';
// A collected allocation is unknown to the client: Nomad's 404 (gc.ts).
import { refuseCollected as allocOf } from './gc.ts';

const idParams = z.object({ id: z.string().min(1) });
const pathQuery = z.looseObject({ path: z.string().default('/') });
const fileQuery = z.looseObject({ path: z.string().min(1, 'must name a file in the allocation directory') });
const readatQuery = fileQuery.extend({
  offset: z.coerce.number().int().min(0, 'must be 0 or more'),
  limit: z.coerce.number().int().min(0, 'must be 0 or more').optional(),
});
const streamQuery = fileQuery.extend({
  offset: z.coerce.number().int().min(0).default(0),
  origin: z.enum(['start', 'end']).default('start'),
  follow: followFlag(),
  plain: queryBool,
});

/** `follow` defaults to true for `fs/stream`, as in Nomad. */
function followFlag() {
  return z.union([z.string(), z.array(z.string())]).optional().transform((v, ctx) => {
    const s = Array.isArray(v) ? v[0] : v;
    if (s === undefined || s === '') return true;
    const parsed = queryBool.safeParse(s);
    if (parsed.success) return parsed.data;
    ctx.addIssue({ code: 'custom', message: parsed.error.issues[0]?.message ?? 'not a boolean' });
    return z.NEVER;
  });
}

/** How often a followed file is checked for new bytes. */
const FOLLOW_POLL_MS = 250;
/** The most one frame carries. */
const FRAME_BYTES = 64 * 1024;

/** Go's `os.FileMode.String()` for a stat result (`-rw-r--r--`, `drwxr-xr-x`, `Lrwxrwxrwx`). */
function fileMode(mode: number, isDir: boolean, isLink: boolean): string {
  const bits = 'rwxrwxrwx';
  let perms = '';
  for (let i = 0; i < 9; i++) perms += mode & (1 << (8 - i)) ? bits[i] : '-';
  return `${isDir ? 'd' : isLink ? 'L' : '-'}${perms}`;
}

/** The allocation's directory and the host path `path` names in it; 400 for a path that leaves it. */
async function resolveIn(ctx: ApiContext, allocId: string, path: string): Promise<{ root: string; target: string; shown: string }> {
  const root = join(ctx.dataDir, 'allocs', allocId);
  const parts = path.split(/[\\/]+/).filter((p) => p !== '' && p !== '.');
  if (parts.includes('..')) throw new HttpError(400, `path ${JSON.stringify(path)} leaves the allocation directory: ".." is not allowed`);
  let realRoot: string;
  try {
    realRoot = await realpath(root);
  } catch {
    throw new HttpError(404, `allocation ${allocId} has no directory on this node (it was never started here, or was removed)`);
  }
  const target = join(realRoot, ...parts);
  return { root: realRoot, target, shown: `/${parts.join('/')}` };
}

/** `target` with its symlinks resolved, checked to stay under `root`; 404 when it does not exist. */
async function confined(root: string, target: string, shown: string): Promise<string> {
  let real: string;
  try {
    real = await realpath(target);
  } catch (err) {
    // A path through a file (ENOTDIR) does not exist either: never a 500 quoting the host path.
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') throw new HttpError(404, `${shown}: no such file or directory in the allocation directory`);
    // A task can make a symlink loop in its own directory: the caller's mistake to see, not the agent's 500.
    if (code === 'ELOOP') throw new HttpError(400, `${shown}: too many levels of symbolic links`);
    throw err;
  }
  if (real !== root && !real.startsWith(root + sep)) throw new HttpError(400, `path ${JSON.stringify(shown)} leads out of the allocation directory (through a symlink)`);
  return real;
}

/** Nomad's `AllocFileInfo`. */
async function fileInfo(path: string, name: string): Promise<Record<string, unknown>> {
  const l = await lstat(path);
  const isLink = l.isSymbolicLink();
  return {
    Name: name,
    IsDir: l.isDirectory(),
    Size: l.size,
    FileMode: fileMode(l.mode, l.isDirectory(), isLink),
    ModTime: l.mtime.toISOString(),
    ContentType: l.isDirectory() ? '' : 'application/octet-stream',
  };
}

/** Opens a regular file under `root` without following a final symlink swapped in after the check. */
async function openFile(root: string, target: string, shown: string): Promise<{ fh: FileHandle; size: number }> {
  const real = await confined(root, target, shown);
  const s = await stat(real);
  if (s.isDirectory()) throw new HttpError(400, `${shown} is a directory`);
  const fh = await open(real, constants.O_RDONLY | constants.O_NOFOLLOW);
  return { fh, size: s.size };
}

/** Registers the allocation filesystem routes. */
export function allocFsRoutes(app: FastifyInstance, ctx: ApiContext): void {
  app.get('/v1/client/fs/ls/:id', { schema: { params: idParams, querystring: pathQuery } }, async (req) => {
    const alloc = allocOf(ctx, req.params);
    const { root, target, shown } = await resolveIn(ctx, alloc.id, (req.query as z.output<typeof pathQuery>).path);
    const dir = await confined(root, target, shown);
    if (!(await stat(dir)).isDirectory()) throw new HttpError(400, `${shown} is not a directory`);
    const names = (await readdir(dir)).sort();
    return Promise.all(names.map((n) => fileInfo(join(dir, n), n)));
  });

  app.get('/v1/client/fs/stat/:id', { schema: { params: idParams, querystring: pathQuery } }, async (req) => {
    const alloc = allocOf(ctx, req.params);
    const { root, target, shown } = await resolveIn(ctx, alloc.id, (req.query as z.output<typeof pathQuery>).path);
    const real = await confined(root, target, shown);
    return fileInfo(real, real === root ? '/' : basename(shown));
  });

  app.get('/v1/client/fs/cat/:id', { schema: { params: idParams, querystring: fileQuery } }, async (req, reply) => {
    const alloc = allocOf(ctx, req.params);
    const { root, target, shown } = await resolveIn(ctx, alloc.id, (req.query as z.output<typeof fileQuery>).path);
    const { fh } = await openFile(root, target, shown);
    return reply.type('text/plain; charset=utf-8').send(fh.createReadStream());
  });

  app.get('/v1/client/fs/readat/:id', { schema: { params: idParams, querystring: readatQuery } }, async (req, reply) => {
    const alloc = allocOf(ctx, req.params);
    const q = req.query as z.output<typeof readatQuery>;
    const { root, target, shown } = await resolveIn(ctx, alloc.id, q.path);
    const { fh, size } = await openFile(root, target, shown);
    const end = q.limit === undefined ? size : Math.min(size, q.offset + q.limit);
    if (q.offset >= end) {
      await fh.close();
      return reply.type('text/plain; charset=utf-8').send('');
    }
    return reply.type('text/plain; charset=utf-8').send(fh.createReadStream({ start: q.offset, end: end - 1 }));
  });

  app.get('/v1/client/fs/stream/:id', { schema: { params: idParams, querystring: streamQuery } }, async (req, reply) => {
    const alloc = allocOf(ctx, req.params);
    const q = req.query as z.output<typeof streamQuery>;
    const { root, target, shown } = await resolveIn(ctx, alloc.id, q.path);
    const { fh, size } = await openFile(root, target, shown);
    await fh.close();
    const real = await confined(root, target, shown);
    let offset = q.origin === 'end' ? Math.max(0, size - q.offset) : Math.min(q.offset, size);
    const out = new PassThrough();
    const file = shown.replace(/^\//, '');
    const send = (data: Buffer) => {
      if (data.length === 0) return;
      offset += data.length;
      out.write(q.plain ? data : `${JSON.stringify({ Offset: offset, Data: data.toString('base64'), File: file, FileEvent: '' })}\n`);
    };
    let closed = false;
    let reading = false;
    // Reads from `offset` to the file's current end; a file that shrank was truncated and is read from 0.
    const pump = async (): Promise<void> => {
      if (reading || closed) return;
      reading = true;
      try {
        const now = await stat(real).catch(() => undefined);
        if (!now) {
          if (!q.plain) out.write(`${JSON.stringify({ Offset: offset, Data: '', File: file, FileEvent: 'file deleted' })}\n`);
          return finish();
        }
        if (now.size < offset) {
          if (!q.plain) out.write(`${JSON.stringify({ Offset: 0, Data: '', File: file, FileEvent: 'file truncated' })}\n`);
          offset = 0;
        }
        if (now.size > offset) {
          for await (const chunk of createReadStream(real, { start: offset, end: now.size - 1, highWaterMark: FRAME_BYTES })) {
            if (closed) break;
            send(chunk as Buffer);
          }
        }
        if (!q.follow) finish();
      } catch (err) {
        if (!q.plain) out.write(`${JSON.stringify({ Error: (err as Error).message })}\n`);
        finish();
      } finally {
        reading = false;
      }
    };
    const poll = q.follow ? setInterval(() => void pump(), FOLLOW_POLL_MS) : undefined;
    const heartbeat = q.follow && !q.plain ? setInterval(() => out.write('{}\n'), ctx.heartbeatMs) : undefined;
    function finish() {
      if (closed) return;
      closed = true;
      clearInterval(poll);
      clearInterval(heartbeat);
      out.end();
    }
    reply.raw.once('close', finish);
    void pump();
    void reply.type(q.plain ? 'text/plain; charset=utf-8' : 'application/json').send(out);
    setImmediate(() => reply.raw.headersSent || reply.raw.flushHeaders());
    return reply;
  });
}
