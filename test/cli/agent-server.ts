/**
 * A small real HTTP server standing in for an agent, for the CLI client's tests: it records each request
 * and answers what the test sets, on a unix socket in a temp data dir and on TCP (IPv4 and IPv6 loopback).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { once } from 'node:events';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** One request the agent saw. */
export interface SeenRequest {
  via: 'socket' | 'tcp' | 'tcp6';
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
}

/** The stand-in agent: `handle` answers each request (by default 200 `{}`). */
export interface FakeAgent {
  dataDir: string;
  port: number;
  port6: number;
  seen: SeenRequest[];
  handle: (req: IncomingMessage, res: ServerResponse) => void;
  close(): Promise<void>;
}

/** Starts the stand-in agent on `<temp data dir>/agent.sock`, 127.0.0.1 and ::1. */
export async function startFakeAgent(): Promise<FakeAgent> {
  const dataDir = mkdtempSync(join(tmpdir(), 'allocrun-fake-agent-'));
  const agent: FakeAgent = {
    dataDir,
    port: 0,
    port6: 0,
    seen: [],
    handle: (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{}');
    },
    close: async () => {
      await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
  const serve = (via: SeenRequest['via']) =>
    createServer((req, res) => {
      agent.seen.push({ via, method: req.method!, url: req.url!, headers: req.headers });
      req.resume();
      req.on('end', () => agent.handle(req, res));
    });
  const servers: Server[] = [serve('socket'), serve('tcp'), serve('tcp6')];
  servers[0]!.listen(join(dataDir, 'agent.sock'));
  servers[1]!.listen(0, '127.0.0.1');
  servers[2]!.listen(0, '::1');
  await Promise.all(servers.map((s) => once(s, 'listening')));
  agent.port = (servers[1]!.address() as { port: number }).port;
  agent.port6 = (servers[2]!.address() as { port: number }).port;
  return agent;
}
