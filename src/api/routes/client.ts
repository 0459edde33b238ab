/** Nomad's client endpoints for one allocation: restart, signal, stats, and its tasks' logs (streamed). */
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import type { Observable, Subscription } from 'rxjs';
import { z } from 'zod';
import { realClock } from '../../drivers/clock.ts';
import type { LogLine } from '../../drivers/controller.ts';
import { readLogs } from '../../drivers/raw-exec/log-reader.ts';
import type { RunnerRejection, AllocRunner, AllocRunnerEvent } from '../../runtime/create-alloc-runner.ts';
import { allocStatsJson } from '../alloc-json.ts';
import { HttpError, notFound, type ApiContext } from '../context.ts';
import type { AllocEntry } from '../job-registry.ts';
import { logsQuery, restartBody, signalBody } from '../schemas.ts';
// A collected allocation is unknown to the client: Nomad's 404 (gc.ts).
import { refuseCollected as allocOf } from './gc.ts';

const idParams = z.object({ id: z.string().min(1) });

function runnerOf(alloc: AllocEntry): AllocRunner {
  if (!alloc.runner) throw new HttpError(400, `allocation ${alloc.id} is not running on this agent`);
  return alloc.runner;
}

function checkTask(alloc: AllocEntry, task: string | undefined): void {
  if (task !== undefined && task !== '' && !alloc.spec.tasks.some((t) => t.name === task)) throw notFound(`task ${JSON.stringify(task)} in allocation ${alloc.id}`);
}

/** Sends a command and answers 400 with the runner's own words when it refuses it (a task that is not running). */
function command(runner: AllocRunner, send: () => void): void {
  const refused: RunnerRejection[] = [];
  const sub = runner.rejections$.subscribe((r) => refused.push(r));
  try {
    send();
  } finally {
    sub.unsubscribe();
  }
  if (refused.length > 0) throw new HttpError(400, refused.map((r) => r.message).join('\n'));
}

/**
 * A task's log lines: through its runner's driver while the agent has one, else (an allocation that had finished
 * before this agent started, so was not restored) from the rotated files left in its alloc dir, as Nomad's client
 * serves a terminal allocation's logs until it is collected. Such a task writes no more: a follow ends at the end.
 */
function logLines(ctx: ApiContext, alloc: AllocEntry, task: string, stream: 'stdout' | 'stderr', follow: boolean): Observable<LogLine> {
  if (alloc.runner) return alloc.runner.logs(task, { stream, follow });
  return readLogs({ dir: join(ctx.dataDir, 'allocs', alloc.id, 'alloc', 'logs'), task, stream, follow, isActive: () => false, clock: realClock });
}

/** One Nomad StreamFrame: base64 data with the offset after it and the file it came from. */
function frame(data: Buffer, offset: number, file: string): string {
  return `${JSON.stringify({ Offset: offset, Data: data.toString('base64'), File: file, FileEvent: '' })}\n`;
}

/** Registers the client routes. */
export function clientRoutes(app: FastifyInstance, ctx: ApiContext): void {
  /** A command route: the body names a task (or none: the alloc's tasks) and becomes one runner event. */
  const commandRoute = <S extends typeof restartBody | typeof signalBody>(verb: string, schema: S, taskOf: (body: z.output<S> & object) => string | undefined, event: (body: z.output<S> & object, task: string | undefined) => AllocRunnerEvent) =>
    app.route({
      method: ['PUT', 'POST'],
      url: `/v1/client/allocation/:id/${verb}`,
      schema: { params: idParams, body: schema },
      handler: async (req) => {
        const alloc = allocOf(ctx, req.params);
        const body = (req.body ?? {}) as z.output<S> & object;
        const task = taskOf(body) || undefined;
        checkTask(alloc, task);
        command(runnerOf(alloc), () => alloc.runner!.send(event(body, task)));
        return {};
      },
    });
  commandRoute('restart', restartBody, (b) => b.TaskName, (b, task) => ({ type: 'RESTART', ...(task !== undefined && { task }), ...(b.AllTasks && { all: true }) }));
  // Nomad's default signal for `alloc signal` is SIGKILL.
  commandRoute('signal', signalBody, (b) => b.Task, (b, task) => ({ type: 'SIGNAL', signal: b.Signal || 'SIGKILL', ...(task !== undefined && { task }) }));

  app.get('/v1/client/allocation/:id/stats', { schema: { params: idParams } }, async (req) => {
    const alloc = allocOf(ctx, req.params);
    return allocStatsJson(runnerOf(alloc).latestAllocStats());
  });

  app.get('/v1/client/fs/logs/:id', { schema: { params: idParams, querystring: logsQuery } }, async (req, reply) => {
    const alloc = allocOf(ctx, req.params);
    const q = req.query as z.output<typeof logsQuery>;
    checkTask(alloc, q.task);
    const file = `alloc/logs/${q.task}.${q.type}.0`;
    const out = new PassThrough();
    let offset = 0;
    let skip = q.origin === 'start' ? q.offset : 0;
    const write = (data: Buffer) => {
      if (skip > 0) {
        const cut = Math.min(skip, data.length);
        skip -= cut;
        data = data.subarray(cut);
      }
      if (data.length === 0) return;
      offset += data.length;
      out.write(q.plain ? data : frame(data, offset, file));
    };
    // The lines already written arrive during subscribe: collect them to apply `origin=end`.
    let initial: Buffer[] | undefined = [];
    const bytes = (l: LogLine) => Buffer.from(`${l.line}\n`);
    let sub: Subscription | undefined;
    const heartbeat = q.follow && !q.plain ? setInterval(() => out.write('{}\n'), ctx.heartbeatMs) : undefined;
    const finish = () => {
      clearInterval(heartbeat);
      sub?.unsubscribe();
      out.end();
    };
    sub = logLines(ctx, alloc, q.task, q.type, q.follow).subscribe({
      next: (l) => (initial ? initial.push(bytes(l)) : write(bytes(l))),
      complete: () => setImmediate(finish),
      error: (err: Error) => {
        out.write(q.plain ? '' : `${JSON.stringify({ Error: err.message })}\n`);
        setImmediate(finish);
      },
    });
    const existing = Buffer.concat(initial);
    initial = undefined;
    write(q.origin === 'end' ? existing.subarray(Math.max(0, existing.length - q.offset)) : existing);
    reply.raw.once('close', finish);
    void reply.type(q.plain ? 'text/plain; charset=utf-8' : 'application/json').send(out);
    // Headers go out now, not with the first line: a client waits on them before it acts (registers, signals).
    setImmediate(() => reply.raw.headersSent || reply.raw.flushHeaders());
    return reply;
  });
}
