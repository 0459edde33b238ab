/**
 * Nomad's ACL shape, small: besides the agent's own token (the management token), client tokens made with
 * `allocrun acl token create -type client -policy read|submit|lifecycle`, each limited to what its policies
 * allow, checked per endpoint.
 *
 * - Every route has a class (ROUTE_CLASSES): `read`, `submit`, `lifecycle` or `management`. A policy grants
 *   classes (POLICY_GRANTS); a client token may do what any of its policies grants. A route with no class
 *   is refused to every client token (and test/api/acl.test.ts fails, naming it).
 * - Who is asking: on the unix socket (0600, the agent's own user) no token is needed and the caller is the
 *   management identity, as it always was; an `X-Nomad-Token` sent there is not looked at. Over TCP the
 *   agent's token (compared by agent-token.ts's tokenMatches) is management; any other token must be a
 *   stored client token, found by the SHA-256 of the presented secret, compared in constant time.
 * - Tokens live in the agent store's `acl` table, keyed by accessor ID; the secret is kept only as its
 *   SHA-256 digest, so neither the store nor a snapshot of it holds one in plain text. A revoked token is
 *   gone from the table, and the next request with it is refused.
 */
import { createHash, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { AgentStore, DamagedValue } from '../state/agent-store.ts';
import { tokenMatches } from './agent-token.ts';
import { isUiPath, refuseUi, uiTokenOf } from './ui-auth.ts';

/** The policies a client token may carry: Nomad's policy names, built in. */
export const POLICIES = ['read', 'submit', 'lifecycle'] as const;
export type Policy = (typeof POLICIES)[number];

/** What a route needs: a class of its own, granted by policies (management needs the agent's token). */
export type RouteClass = 'read' | 'submit' | 'lifecycle' | 'management';

/** The route classes each policy grants: every client token reads; submit and lifecycle add their writes. */
export const POLICY_GRANTS: Readonly<Record<Policy, readonly RouteClass[]>> = {
  read: ['read'],
  submit: ['read', 'submit'],
  lifecycle: ['read', 'lifecycle'],
};

/**
 * Every route the API registers, `METHOD url` as Fastify knows it (HEAD follows its GET). Reads are `read`
 * except the store snapshot, which holds every job's environment and every token's hash: management, as in
 * Nomad. A new route must be added here, or client tokens are refused on it and the route walk test fails.
 */
export const ROUTE_CLASSES: Readonly<Record<string, RouteClass>> = {
  // jobs
  'GET /v1/jobs': 'read',
  'GET /v1/job/:id': 'read',
  'GET /v1/job/:id/allocations': 'read',
  'GET /v1/job/:id/summary': 'read',
  'GET /v1/job/:id/versions': 'read',
  // Nomad: a job's submission needs read-job.
  'GET /v1/job/:id/submission': 'read',
  'GET /v1/job/:id/evaluations': 'read',
  'PUT /v1/jobs': 'submit',
  'POST /v1/jobs': 'submit',
  'PUT /v1/job/:id': 'submit',
  'POST /v1/job/:id': 'submit',
  'DELETE /v1/job/:id': 'submit',
  // Nomad: periodic force needs submit-job.
  'PUT /v1/job/:id/periodic/force': 'submit',
  'POST /v1/job/:id/periodic/force': 'submit',
  // Nomad: revert needs submit-job.
  'PUT /v1/job/:id/revert': 'submit',
  'POST /v1/job/:id/revert': 'submit',
  // Nomad: scaling needs scale-job (or submit-job), reading it read-job (or read-job-scaling): write and read policies grant them.
  'GET /v1/job/:id/scale': 'read',
  'PUT /v1/job/:id/scale': 'submit',
  'POST /v1/job/:id/scale': 'submit',
  'GET /v1/scaling/policies': 'read',
  'GET /v1/scaling/policy/:id': 'read',
  // Nomad: searching needs read on each context searched (read-job, node:read, variables' list): read grants them all
  'PUT /v1/search': 'read',
  'POST /v1/search': 'read',
  'PUT /v1/search/fuzzy': 'read',
  'POST /v1/search/fuzzy': 'read',
  // Nomad: dispatch needs dispatch-job, which Nomad's write policy grants beside submit-job: allocrun's submit.
  'PUT /v1/job/:id/dispatch': 'submit',
  'POST /v1/job/:id/dispatch': 'submit',
  'POST /v1/jobs/parse': 'submit',
  'PUT /v1/validate/job': 'submit',
  'POST /v1/validate/job': 'submit',
  // allocations
  'GET /v1/allocations': 'read',
  'GET /v1/allocation/:id': 'read',
  'PUT /v1/allocation/:id/stop': 'lifecycle',
  'POST /v1/allocation/:id/stop': 'lifecycle',
  'PUT /v1/client/allocation/:id/restart': 'lifecycle',
  'POST /v1/client/allocation/:id/restart': 'lifecycle',
  'PUT /v1/client/allocation/:id/signal': 'lifecycle',
  'POST /v1/client/allocation/:id/signal': 'lifecycle',
  'GET /v1/client/allocation/:id/stats': 'read',
  'GET /v1/client/allocation/:id/checks': 'read',
  'GET /v1/client/fs/logs/:id': 'read',
  // Nomad's alloc-node-exec (raw_exec runs as the agent's user): granted by no built-in policy (routes/alloc-exec.ts)
  'GET /v1/client/allocation/:id/exec': 'management',
  // evaluations, events
  'GET /v1/evaluations': 'read',
  'GET /v1/evaluation/:id': 'read',
  'GET /v1/evaluation/:id/allocations': 'read',
  'GET /v1/event/stream': 'read',
  // agent and status
  'GET /v1/agent/self': 'read',
  'GET /v1/agent/health': 'read',
  'GET /v1/status/leader': 'read',
  'GET /v1/status/peers': 'read',
  'GET /v1/regions': 'read',
  // the node, the cluster, plans and deployments (issue 26)
  'GET /v1/nodes': 'read',
  'GET /v1/node/:id': 'read',
  'GET /v1/node/:id/allocations': 'read',
  // node pools (routes/node-pools.ts): reads as Nomad's node_pool read; writes are refused, management's as Nomad's node_pool write
  'GET /v1/node/pools': 'read',
  'GET /v1/node/pool/:name': 'read',
  'GET /v1/node/pool/:name/jobs': 'read',
  'GET /v1/node/pool/:name/nodes': 'read',
  'PUT /v1/node/pools': 'management',
  'POST /v1/node/pools': 'management',
  'PUT /v1/node/pool/:name': 'management',
  'POST /v1/node/pool/:name': 'management',
  'DELETE /v1/node/pool/:name': 'management',
  // dynamic node meta (routes/node-meta.ts): Nomad's node:read, and node:write as for the client's gc
  'GET /v1/client/metadata': 'read',
  'POST /v1/client/metadata': 'management',
  'GET /v1/client/stats': 'read',
  'GET /v1/agent/members': 'read',
  'GET /v1/agent/servers': 'read',
  'GET /v1/namespaces': 'read',
  'GET /v1/namespace/:name': 'read',
  'PUT /v1/job/:id/plan': 'submit',
  'POST /v1/job/:id/plan': 'submit',
  'PUT /v1/job/:id/evaluate': 'submit',
  'POST /v1/job/:id/evaluate': 'submit',
  'GET /v1/deployments': 'read',
  'GET /v1/deployment/:id': 'read',
  'GET /v1/deployment/allocations/:id': 'read',
  'GET /v1/job/:id/deployments': 'read',
  'GET /v1/job/:id/deployment': 'read',
  'PUT /v1/deployment/fail/:id': 'submit',
  'POST /v1/deployment/fail/:id': 'submit',
  'PUT /v1/deployment/promote/:id': 'submit',
  'POST /v1/deployment/promote/:id': 'submit',
  'GET /v1/client/fs/ls/:id': 'read',
  'GET /v1/client/fs/stat/:id': 'read',
  'GET /v1/client/fs/cat/:id': 'read',
  'GET /v1/client/fs/readat/:id': 'read',
  'GET /v1/client/fs/stream/:id': 'read',
  'GET /v1/metrics': 'read',
  // Nomad-native services (issue 27)
  'GET /v1/services': 'read',
  'GET /v1/service/:name': 'read',
  'DELETE /v1/service/:name/:id': 'submit',
  'GET /v1/job/:id/services': 'read',
  'GET /v1/allocation/:id/services': 'read',
  // variables: every client token reads and lists them (Nomad's read and list capabilities); writing and
  // deleting (write, destroy) is submit's, as a job's variables go with the job
  'GET /v1/vars': 'read',
  'GET /v1/var/*': 'read',
  'PUT /v1/var/*': 'submit',
  'POST /v1/var/*': 'submit',
  'DELETE /v1/var/*': 'submit',
  // operator
  'GET /v1/operator/snapshot': 'management',
  // garbage collection (gc.ts): Nomad's node:write for the client's, management for the server's, submit-job for one allocation
  'PUT /v1/client/gc': 'management',
  'POST /v1/client/gc': 'management',
  'PUT /v1/system/gc': 'management',
  'POST /v1/system/gc': 'management',
  'PUT /v1/client/allocation/:id/gc': 'submit',
  'POST /v1/client/allocation/:id/gc': 'submit',
  // ACL tokens: managed with the agent's token only; any token may read itself
  'POST /v1/acl/token': 'management',
  'PUT /v1/acl/token': 'management',
  'GET /v1/acl/tokens': 'management',
  'GET /v1/acl/token/:accessor': 'management',
  'DELETE /v1/acl/token/:accessor': 'management',
  'GET /v1/acl/token/self': 'read',
  // the visualizer, served at /ui (issue 29): watching is reading; its commands are checked as lifecycle
  // writes when they arrive on the socket (routes/ui.ts)
  'GET /ui': 'read',
  'GET /ui/': 'read',
  'GET /ui/app.js': 'read',
  'GET /ui/logs': 'read',
  'GET /ui/ws': 'read',
};

/** The class of `method url` (a route's pattern, not a request's path), or undefined when it has none. */
export function routeClass(method: string, url: string): RouteClass | undefined {
  const m = method.toUpperCase() === 'HEAD' ? 'GET' : method.toUpperCase();
  return Object.hasOwn(ROUTE_CLASSES, `${m} ${url}`) ? ROUTE_CLASSES[`${m} ${url}`] : undefined;
}

/** Whether a client token with `policies` may use a route of class `cls` (undefined: a route with no class). */
export function policiesAllow(policies: readonly Policy[], cls: RouteClass | undefined): boolean {
  if (cls === undefined || cls === 'management') return false;
  return policies.some((p) => POLICY_GRANTS[p]?.includes(cls));
}

/** A client token as the `acl` table keeps it: Nomad's fields, and the secret only as its SHA-256 (hex). */
export interface AclTokenRecord {
  AccessorID: string;
  Name: string;
  Type: 'client';
  Policies: Policy[];
  Global: false;
  /** RFC 3339, as Nomad writes it. */
  CreateTime: string;
  CreateIndex: number;
  ModifyIndex: number;
  SecretHash: string;
}

/** Who a request comes from. */
export type Identity =
  | { kind: 'socket' }
  | { kind: 'management' }
  | { kind: 'client'; token: AclTokenRecord };

/** The SHA-256 of a secret, hex: what the store keeps instead of the secret. */
export function hashSecret(secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('hex');
}

/** A new secret: 256 random bits as 64 hex digits, as the agent's own generated token. */
export function generateSecret(): string {
  return randomBytes(32).toString('hex');
}

/** A stored value that has the shape of a token record (anything else counts as damaged). */
export function isTokenRecord(v: unknown): v is AclTokenRecord {
  const r = v as Partial<AclTokenRecord> | null;
  return (
    typeof r === 'object' && r !== null &&
    typeof r.AccessorID === 'string' && typeof r.Name === 'string' && r.Type === 'client' &&
    Array.isArray(r.Policies) && r.Policies.length > 0 && r.Policies.every((p) => (POLICIES as readonly string[]).includes(p)) &&
    typeof r.CreateTime === 'string' && typeof r.CreateIndex === 'number' && typeof r.ModifyIndex === 'number' &&
    typeof r.SecretHash === 'string' && /^[0-9a-f]{64}$/.test(r.SecretHash)
  );
}

/** Every token in the store, in accessor order, and every entry that is not one (named, never dropped). */
export function listTokens(store: AgentStore): { tokens: AclTokenRecord[]; damaged: DamagedValue[] } {
  const { values, damaged } = store.entries('acl');
  const tokens: AclTokenRecord[] = [];
  for (const { key, value } of values) {
    if (isTokenRecord(value) && value.AccessorID === key) tokens.push(value);
    else damaged.push({ table: 'acl', key, why: 'not an ACL token record' });
  }
  return { tokens, damaged };
}

/**
 * The stored client token whose secret is `presented`, or undefined. Every record is compared, in constant
 * time over the digests, whatever matched: neither a near miss nor the matching record shows in the timing.
 */
export function findTokenBySecret(store: AgentStore, presented: unknown): AclTokenRecord | undefined {
  if (typeof presented !== 'string' || presented === '') return undefined;
  const given = createHash('sha256').update(presented, 'utf8').digest();
  let found: AclTokenRecord | undefined;
  for (const t of listTokens(store).tokens) {
    if (timingSafeEqual(given, Buffer.from(t.SecretHash, 'hex')) && found === undefined) found = t;
  }
  return found;
}

/** Nomad's `ACLToken` JSON for a record: never the hash; the secret only when just made. */
export function tokenJson(t: AclTokenRecord, secret?: string): Record<string, unknown> {
  return {
    AccessorID: t.AccessorID,
    ...(secret !== undefined && { SecretID: secret }),
    Name: t.Name,
    Type: t.Type,
    Policies: t.Policies,
    Roles: null,
    Global: t.Global,
    CreateTime: t.CreateTime,
    ExpirationTime: null,
    CreateIndex: t.CreateIndex,
    ModifyIndex: t.ModifyIndex,
  };
}

/** Nomad's `ACLTokenListStub` for a record. */
export function tokenStubJson(t: AclTokenRecord): Record<string, unknown> {
  const { SecretID: _none, ...stub } = tokenJson(t) as { SecretID?: string };
  return stub;
}

/** The management identity's `ACLToken` JSON (`/v1/acl/token/self`): it is not stored, so it has no index. */
export function managementJson(identity: { kind: 'socket' } | { kind: 'management' }): Record<string, unknown> {
  return {
    AccessorID: identity.kind === 'socket' ? 'agent-socket' : 'agent-token',
    Name: identity.kind === 'socket' ? "the agent's unix socket" : "the agent's token",
    Type: 'management',
    Policies: null,
    Roles: null,
    Global: false,
    CreateTime: null,
    ExpirationTime: null,
    CreateIndex: 0,
    ModifyIndex: 0,
  };
}

/** A Go zero value Nomad's clients send for a field they leave unset. */
const zero = (v: unknown): boolean => v === undefined || v === null || v === '' || v === 0 || v === false || v === '0001-01-01T00:00:00Z' || (Array.isArray(v) && v.length === 0);

/**
 * `POST /v1/acl/token`'s body: Nomad's `ACLToken`, of which `Name`, `Type` and `Policies` are read. Fields
 * Nomad's clients fill with zero values pass; a non-zero one this agent does not do is refused by name.
 */
export const createTokenBody = z
  .looseObject({
    Name: z.string().max(256, 'must be at most 256 characters').refine((s) => !/[\u0000-\u001f\u007f]/.test(s), 'must not contain control characters').nullish(),
    Type: z.string().nullish(),
    Policies: z.array(z.string()).nullish(),
    Global: z.boolean().nullish(),
  })
  .superRefine((b, ctx) => {
    const type = b.Type || 'client';
    if (type === 'management') {
      ctx.addIssue({ code: 'custom', path: ['Type'], message: "only client tokens can be created: the agent's own token (--token-file) is the management token" });
    } else if (type !== 'client') {
      ctx.addIssue({ code: 'custom', path: ['Type'], message: `must be "client" (got ${JSON.stringify(type)})` });
    }
    const policies = b.Policies ?? [];
    if (policies.length === 0) ctx.addIssue({ code: 'custom', path: ['Policies'], message: `a client token needs at least one policy: ${POLICIES.join(', ')}` });
    for (const p of policies) {
      if (!(POLICIES as readonly string[]).includes(p)) ctx.addIssue({ code: 'custom', path: ['Policies'], message: `unknown policy ${JSON.stringify(p)}; the policies are ${POLICIES.join(', ')}` });
    }
    if (b.Global) ctx.addIssue({ code: 'custom', path: ['Global'], message: 'global tokens need replication between regions; this agent is one node: leave Global false' });
    const unsupported: Record<string, string> = {
      AccessorID: 'the agent makes the accessor ID',
      SecretID: 'the agent makes the secret',
      Roles: 'ACL roles are not supported; use Policies',
      ExpirationTTL: 'expiring tokens are not supported; delete the token to revoke it',
      ExpirationTime: 'expiring tokens are not supported; delete the token to revoke it',
    };
    for (const [field, why] of Object.entries(unsupported)) {
      if (!zero((b as Record<string, unknown>)[field])) ctx.addIssue({ code: 'custom', path: [field], message: why });
    }
  });

/** A new client token record for a checked create body, with its secret (shown once, never stored). */
export function newClientToken(body: z.output<typeof createTokenBody>, index: number, now: Date): { record: AclTokenRecord; secret: string } {
  const secret = generateSecret();
  const policies = [...new Set(body.Policies ?? [])] as Policy[];
  const record: AclTokenRecord = {
    AccessorID: randomUUID(),
    Name: body.Name ?? '',
    Type: 'client',
    Policies: policies,
    Global: false,
    CreateTime: now.toISOString(),
    CreateIndex: index,
    ModifyIndex: index,
    SecretHash: hashSecret(secret),
  };
  return { record, secret };
}

/** A registered route as the walk sees it. */
export interface RegisteredRoute {
  method: string;
  url: string;
}

const routesOf = new WeakMap<FastifyInstance, RegisteredRoute[]>();
const identities = new WeakMap<FastifyRequest, Identity>();

/** Every route registered on `app` since `installAcl`, one entry per method (HEAD routes included). */
export function registeredRoutes(app: FastifyInstance): RegisteredRoute[] {
  return [...(routesOf.get(app) ?? [])];
}

/** Who `req` comes from, as the ACL hook found; throws when the hook did not run (a bug, answered 500). */
export function identityOf(req: FastifyRequest): Identity {
  const id = identities.get(req);
  if (!id) throw new Error(`no ACL identity for ${req.method} ${req.url.split('?')[0]}: the ACL hook did not run`);
  return id;
}

const deny = (reply: FastifyReply) => reply.code(403).type('text/plain; charset=utf-8').send('Permission denied');

/**
 * Who presents `presented` to an agent guarded by `token` (undefined: the socket, everyone is management):
 * management for the agent's token, the stored client token whose secret it is, else undefined.
 */
export function identify(store: AgentStore, token: string | undefined, presented: unknown): Identity | undefined {
  if (token === undefined) return { kind: 'socket' };
  if (tokenMatches(presented, token)) return { kind: 'management' };
  const client = findTokenBySecret(store, presented);
  return client && { kind: 'client', token: client };
}

/**
 * Records every route registered on `app` from now on, and checks every request: with `token` undefined
 * (the unix socket) everyone is the management identity; otherwise the agent's token is management, a
 * stored client token may use the routes its policies allow, and anything else is 403 "Permission denied".
 * Call before registering routes. A path no route matches is left to the 404 handler for a valid token.
 */
export function installAcl(app: FastifyInstance, store: AgentStore, token: string | undefined): void {
  const routes: RegisteredRoute[] = [];
  routesOf.set(app, routes);
  app.addHook('onRoute', (r) => {
    for (const method of [r.method].flat()) routes.push({ method: String(method), url: r.url });
  });
  app.addHook('onRequest', async (req, reply) => {
    if (token === undefined) return void identities.set(req, { kind: 'socket' });
    // A browser cannot send the header: the UI's pages carry the token in their sign-in cookie (ui-auth.ts).
    const ui = isUiPath(req.url);
    const presented = req.headers['x-nomad-token'] ?? (ui ? uiTokenOf(req.raw) : undefined);
    const identity = identify(store, token, presented);
    if (!identity) return ui ? refuseUi(req.raw, reply, presented !== undefined) : deny(reply);
    identities.set(req, identity);
    if (identity.kind !== 'client' || req.is404) return;
    if (!policiesAllow(identity.token.Policies, routeClass(req.method, req.routeOptions.url ?? ''))) return deny(reply);
  });
}
