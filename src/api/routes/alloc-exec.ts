/**
 * Nomad's `GET /v1/client/allocation/:id/exec`: a command run in a running task, over a WebSocket. The
 * query names the task, the command (a JSON array) and whether to give it a tty. Frames are Nomad's JSON:
 * in, `{"stdin":{"data":"<base64>"}}`, `{"stdin":{"close":true}}`, `{"tty_size":…}`; out,
 * `{"stdout":{"data":…}}`, `{"stderr":{"data":…}}`, and last `{"exited":true,"result":{"exit_code":n}}`.
 *
 * What Nomad would refuse is refused before the handshake, as an HTTP answer in Nomad's words (an unknown
 * task, one not started or not running, no command). A tty is refused: a pseudo-terminal needs a native
 * module, and a command given pipes while told it has a terminal would misbehave. The route's ACL class is
 * `management` (acl.ts): Nomad's alloc-node-exec, needed for raw_exec, is in none of the built-in policies.
 */
import type { FastifyInstance } from 'fastify';
import { WebSocketServer, type WebSocket } from 'ws';
import { z } from 'zod';
import type { ExecSession } from '../../drivers/controller.ts';
import { ExecRefusedError } from '../../runtime/exec-in-running-task.ts';
import { HttpError, type ApiContext } from '../context.ts';
import { upgradeOf } from '../ws-upgrade.ts';
import { refuseCollected as allocOf } from './gc.ts';

const execParams = z.object({ id: z.string().min(1) });

const execQuery = z.looseObject({
  task: z.string().default(''),
  tty: z.enum(['true', 'false']).default('false'),
  command: z.string().default(''),
});

/** The query's command: a JSON array of strings, not empty. */
function commandOf(raw: string): string[] {
  if (raw === '') throw new HttpError(400, 'command is not present');
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    throw new HttpError(400, `command ${JSON.stringify(raw)} is not a JSON array of strings, e.g. ["echo","hi"]`);
  }
  if (!Array.isArray(parsed) || !parsed.every((a) => typeof a === 'string')) throw new HttpError(400, `command ${JSON.stringify(raw)} is not a JSON array of strings, e.g. ["echo","hi"]`);
  if (parsed.length === 0 || parsed[0] === '') throw new HttpError(400, 'command is not present');
  return parsed as string[];
}

/** One of Nomad's exec input frames; anything else is a protocol error. */
const inputFrame = z.looseObject({
  stdin: z.looseObject({ data: z.string().optional(), close: z.boolean().optional() }).optional(),
  tty_size: z.looseObject({ height: z.number(), width: z.number() }).optional(),
});

/** Pumps the session over the socket until the command has exited and said so. */
function relay(ws: WebSocket, session: ExecSession, abort: AbortController): void {
  const send = (frame: object) => {
    if (ws.readyState === ws.OPEN) ws.send(JSON.stringify(frame));
  };
  session.stdout.on('data', (d: Buffer) => send({ stdout: { data: d.toString('base64') } }));
  session.stderr.on('data', (d: Buffer) => send({ stderr: { data: d.toString('base64') } }));
  ws.on('message', (raw) => {
    let frame: z.output<typeof inputFrame>;
    try {
      frame = inputFrame.parse(JSON.parse(String(raw)));
    } catch {
      return ws.close(1003, 'expected a JSON exec frame, e.g. {"stdin":{"data":"<base64>"}}');
    }
    if (frame.stdin?.data) session.stdin.write(Buffer.from(frame.stdin.data, 'base64'));
    if (frame.stdin?.close) session.stdin.end();
    // tty_size means nothing without a tty: ignored, as a resize of a closed terminal would be.
  });
  // The client went away: nobody will read the output or end the input, so the command goes too.
  ws.on('close', () => abort.abort(new Error('the exec session closed')));
  session.exited.then(
    (code) => {
      send({ exited: true, result: { exit_code: code } });
      ws.close(1000);
    },
    (err: Error) => {
      send({ stderr: { data: Buffer.from(`${err.message}\n`).toString('base64') } });
      ws.close(1011, err.message.slice(0, 120));
    },
  );
}

/** Registers the exec route. */
export function allocExecRoutes(app: FastifyInstance, ctx: ApiContext): void {
  const sockets = new WebSocketServer({ noServer: true, maxPayload: 1024 * 1024 });
  app.get('/v1/client/allocation/:id/exec', { schema: { params: execParams, querystring: execQuery } }, async (req, reply) => {
    const alloc = allocOf(ctx, req.params);
    const q = req.query as z.output<typeof execQuery>;
    if (q.task === '') throw new HttpError(400, 'missing task name (the task query parameter)');
    const command = commandOf(q.command);
    if (q.tty === 'true') throw new HttpError(400, 'tty=true: allocrun cannot give the command a terminal (a pseudo-terminal needs a native module); run it without one (alloc exec -t=false)');
    if (!alloc.spec.tasks.some((t) => t.name === q.task)) throw new HttpError(400, `unknown task name ${JSON.stringify(q.task)}`);
    if (!alloc.runner) throw new HttpError(400, `allocation ${alloc.id} is not running on this agent`);
    const state = alloc.runner.getState().taskStates[q.task];
    if (state?.startedAt === undefined) throw new HttpError(404, `task ${JSON.stringify(q.task)} not started yet.`);
    if (state.state === 'dead') throw new HttpError(404, `task ${JSON.stringify(q.task)} is not running.`);
    const up = upgradeOf(req.raw);
    if (!up) return reply.code(426).header('upgrade', 'websocket').type('text/plain; charset=utf-8').send('the exec endpoint is a WebSocket: connect with Upgrade: websocket\n');
    const abort = new AbortController();
    let session: ExecSession;
    try {
      session = alloc.runner.execStreaming(q.task, command[0]!, command.slice(1), abort.signal);
    } catch (err) {
      if (err instanceof ExecRefusedError) throw new HttpError(404, err.message);
      // The command given could not be started (no such executable): the caller's to fix.
      throw new HttpError(400, (err as Error).message);
    }
    reply.hijack();
    let upgraded = false;
    // A handshake ws rejects (a bad key or version) never reaches the callback: the command must not outlive it.
    up.socket.once('close', () => upgraded || abort.abort(new Error('the exec handshake failed')));
    sockets.handleUpgrade(req.raw, up.socket, up.head, (ws) => {
      upgraded = true;
      relay(ws, session, abort);
    });
  });
  app.addHook('preClose', async () => {
    for (const ws of sockets.clients) ws.terminate();
    sockets.close();
  });
}
