/**
 * The agent's HTTP API (Nomad's paths, methods and JSON) on Fastify: zod-checked input, a body cap, the
 * agent token on every request when one is set, and every error answered as Nomad does: a status code and
 * a plain-text message, never a stack trace.
 */
import Fastify, { type FastifyError, type FastifyInstance } from 'fastify';
import { DEFAULT_PARSE_LIMITS } from '../jobspec/limits.ts';
import { installAcl } from './acl.ts';
import { checkTokenStrength } from './agent-token.ts';
import { listQueryOptions } from './query-options.ts';
import type { ApiContext } from './context.ts';
import { aclRoutes } from './routes/acl.ts';
import { agentRoutes } from './routes/agent.ts';
import { allocFsRoutes } from './routes/alloc-fs.ts';
import { allocChecksRoutes } from './routes/alloc-checks.ts';
import { allocationRoutes } from './routes/allocations.ts';
import { clientRoutes } from './routes/client.ts';
import { gcRoutes } from './routes/gc.ts';
import { clusterRoutes } from './routes/cluster.ts';
import { deploymentRoutes } from './routes/deployments.ts';
import { serviceRoutes } from './routes/services.ts';
import { evaluationRoutes } from './routes/evaluations.ts';
import { operatorRoutes } from './routes/operator.ts';
import { eventRoutes } from './routes/events.ts';
import { jobRoutes } from './routes/jobs.ts';
import { periodicRoutes } from './routes/periodic.ts';
import { jobDispatchRoutes } from './routes/job-dispatch.ts';
import { jobPlanRoutes } from './routes/job-plan.ts';
import { metricsRoutes } from './routes/metrics.ts';
import { nodeRoutes } from './routes/nodes.ts';
import { jobRevertRoutes } from './routes/job-revert.ts';
import { jobScaleRoutes } from './routes/job-scale.ts';
import { scalingRoutes } from './routes/scaling.ts';
import { searchRoutes } from './routes/search.ts';
import { nodeMetaRoutes } from './routes/node-meta.ts';
import { nodePoolRoutes } from './routes/node-pools.ts';
import { variableRoutes } from './routes/variables.ts';
import { uiRoutes } from './routes/ui.ts';
import { allocExecRoutes } from './routes/alloc-exec.ts';
import { routeUpgrades } from './ws-upgrade.ts';
import { zodValidatorCompiler } from './schemas.ts';

/** Bodies over this are refused with 413: a job is a few kilobytes, a megabyte is already generous. */
export const DEFAULT_BODY_LIMIT = 1024 * 1024;
/**
 * Bodies nesting objects and lists deeper than this are refused with 400 before they are parsed: the job
 * loader's own limit, which a job within it never reaches, and far from the recursion depth at which
 * serialising a parsed body would overflow the stack (a 500, about 4,500 levels).
 */
export const MAX_BODY_DEPTH = DEFAULT_PARSE_LIMITS.maxDepth;

/** The offset of the first `{` or `[` of JSON text nested deeper than `max`, or undefined; no recursion. */
export function excessiveJsonNesting(text: string, max: number): number | undefined {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++; // a backslash escapes the next character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) {
      if (++depth > max) return i;
    } else if (c === 0x7d || c === 0x5d) depth--;
  }
  return undefined;
}

/** How the API is built. */
export interface ApiServerOptions {
  /**
   * Required in `X-Nomad-Token` on every request when set (compared by agent-token.ts's tokenMatches), or a
   * client token from the store within its policies (acl.ts).
   */
  token?: string;
  bodyLimit?: number;
}

/** Builds the Fastify app with every route; the caller listens. */
export function buildApi(ctx: ApiContext, opts: ApiServerOptions = {}): FastifyInstance {
  const app = Fastify({ bodyLimit: opts.bodyLimit ?? DEFAULT_BODY_LIMIT, logger: false, forceCloseConnections: true });
  app.setValidatorCompiler(zodValidatorCompiler);

  // Nomad's clients do not always say what they send: read every body as JSON, as Nomad does.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'string' }, (req, body, done) => {
    const text = String(body);
    if (text.trim() === '') return done(null, undefined);
    const deep = excessiveJsonNesting(text, MAX_BODY_DEPTH);
    if (deep !== undefined) {
      return done(Object.assign(new Error(`the request body nests objects and lists more than ${MAX_BODY_DEPTH} levels deep (at character ${deep})`), { statusCode: 400 }), undefined);
    }
    try {
      done(null, JSON.parse(text));
    } catch (err) {
      // V8's message quotes the text around the fault: never a variable's secrets back into an error.
      const why = req.url.startsWith('/v1/var/') ? 'it does not parse' : (err as Error).message;
      done(Object.assign(new Error(`the request body is not valid JSON: ${why}`), { statusCode: 400 }), undefined);
    }
  });

  // Belt and braces: whoever builds the API, an empty or short token never guards it. Without a token (the
  // socket) every caller is management; with one, acl.ts checks each request against its route's class.
  installAcl(app, ctx.store, opts.token === undefined ? undefined : checkTokenStrength(opts.token, 'the API token'));

  // A failed validation's message already names each field (zodValidatorCompiler): it is sent as it is.
  app.setErrorHandler((err: FastifyError, _req, reply) => {
    const status = err.statusCode && err.statusCode >= 400 ? err.statusCode : 500;
    const message = err.code === 'FST_ERR_CTP_BODY_TOO_LARGE' ? `the request body is over the limit of ${opts.bodyLimit ?? DEFAULT_BODY_LIMIT} bytes` : err.message;
    // A failed commit (disk full, I/O error) or a bug: the operator must see it, not only the client.
    if (status >= 500) process.stderr.write(`allocrun agent: ${_req.method} ${_req.url.split('?')[0]}: ${message}\n`);
    void reply.code(status).type('text/plain; charset=utf-8').send(message);
  });
  app.setNotFoundHandler((req, reply) => void reply.code(404).type('text/plain; charset=utf-8').send(`Invalid URL: ${req.method} ${req.url.split('?')[0]}`));

  jobRoutes(app, ctx);
  jobRevertRoutes(app, ctx);
  jobScaleRoutes(app, ctx);
  scalingRoutes(app, ctx);
  searchRoutes(app, ctx);
  periodicRoutes(app, ctx);
  jobDispatchRoutes(app, ctx);
  allocationRoutes(app, ctx);
  clientRoutes(app, ctx);
  gcRoutes(app, ctx);
  eventRoutes(app, ctx);
  evaluationRoutes(app, ctx);
  operatorRoutes(app, ctx);
  agentRoutes(app, ctx);
  nodeRoutes(app, ctx);
  nodeMetaRoutes(app, ctx);
  nodePoolRoutes(app, ctx);
  clusterRoutes(app, ctx);
  jobPlanRoutes(app, ctx);
  deploymentRoutes(app, ctx);
  serviceRoutes(app, ctx);
  allocFsRoutes(app, ctx);
  allocChecksRoutes(app, ctx);
  metricsRoutes(app, ctx);
  listQueryOptions(app);
  aclRoutes(app, ctx);
  variableRoutes(app, ctx);
  uiRoutes(app, ctx, opts.token);
  allocExecRoutes(app, ctx);
  // /ui/ws has its own handshake listener (routes/ui.ts) when there is a UI; every other handshake is routed.
  routeUpgrades(app, (path) => path === '/ui/ws' && (ctx as { ui?: unknown }).ui !== undefined);
  return app;
}
