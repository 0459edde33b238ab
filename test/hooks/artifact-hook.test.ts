import { existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { xz } from '@napi-rs/lzma';
import { afterEach, beforeAll, afterAll, describe, expect, it } from 'vitest';
import { artifactHook } from '../../src/hooks/artifact-hook.ts';
import { HookError, type HookEvent, type TaskPrestartResponse } from '../../src/hooks/types.ts';
import type { ArtifactConfig } from '../../src/artifacts/config.ts';
import type { ArtifactSpec } from '../../src/jobspec/types.ts';
import { compressWith, gz, hasTool, removeTempDirs, sha256, startArtifactServer, tarOf, tempDir, tree, zipOf, type ArtifactServer } from '../artifacts/artifact-server.ts';

let server: ArtifactServer;
beforeAll(async () => {
  server = await startArtifactServer();
});
afterAll(() => server.close());
afterEach(removeTempDirs);

interface Fetch {
  config?: Partial<ArtifactConfig>;
  user?: string;
  previousState?: unknown;
  taskDir?: string;
}

/** Runs the hook's prestart for one task with `artifacts`, as the task runner would after task_dir. */
async function prestart(artifacts: Partial<ArtifactSpec>[], opts: Fetch = {}) {
  const taskDir = opts.taskDir ?? tempDir();
  mkdirSync(join(taskDir, 'local'), { recursive: true });
  const events: HookEvent[] = [];
  const res: TaskPrestartResponse = {};
  const specs = artifacts.map((a) => ({ destination: 'local/', mode: 'any' as const, source: '', ...a }));
  const req = {
    task: { name: 't', driver: 'mock', config: {}, artifacts: specs, ...(opts.user && { user: opts.user }) },
    taskDir,
    env: Object.freeze({ NOMAD_TASK_DIR: join(taskDir, 'local'), NOMAD_META_version: '1.2.3' }),
    previousState: opts.previousState,
    resources: {},
    emitEvent: (e: HookEvent) => void events.push(e),
  };
  const error = await artifactHook({ config: opts.config }).prestart!(req, res, new AbortController().signal).then(() => undefined, (e: unknown) => e);
  return { taskDir, res, events, error: error as HookError | undefined };
}

/** The files under `dir`, relative, sorted (symlinks shown with their target). */
function listing(dir: string, prefix = ''): string[] {
  return readdirSync(dir).sort().flatMap((name) => {
    const path = join(dir, name);
    const st = lstatSync(path);
    if (st.isDirectory()) return listing(path, `${prefix}${name}/`);
    return [`${prefix}${name}`];
  });
}

describe('the artifacts hook', () => {
  it('downloads a file into local/ under its name, records Downloading Artifacts and is Done', async () => {
    server.route('/bin/tool', Buffer.from('#!/bin/sh\necho hi\n'));
    const { taskDir, res, events, error } = await prestart([{ source: server.url('/bin/tool') }]);
    expect(error).toBeUndefined();
    expect(readFileSync(join(taskDir, 'local/tool'), 'utf8')).toBe('#!/bin/sh\necho hi\n');
    expect(events).toEqual([{ type: 'Downloading Artifacts' }]);
    expect(res.done).toBe(true);
    expect(Object.values(res.state as object)).toEqual(['1']);
    // No work dir is left beside the task's own files.
    expect(readdirSync(taskDir).sort()).toEqual(['local']);
  });

  it('accepts a download whose checksum matches', async () => {
    const body = Buffer.from('checked content');
    server.route('/sum/ok.txt', body);
    const { taskDir, error } = await prestart([{ source: server.url('/sum/ok.txt'), options: { checksum: `sha256:${sha256(body)}` } }]);
    expect(error).toBeUndefined();
    expect(readFileSync(join(taskDir, 'local/ok.txt'), 'utf8')).toBe('checked content');
  });

  it('fails a download whose checksum does not match, naming expected and got, and leaves nothing behind', async () => {
    const body = Buffer.from('tampered content');
    server.route('/sum/bad.txt', body);
    const want = 'f'.repeat(64);
    const { taskDir, error } = await prestart([{ source: server.url('/sum/bad.txt'), options: { checksum: `sha256:${want}` } }]);
    expect(error).toBeInstanceOf(HookError);
    expect(error!.eventType).toBe('Failed Artifact Download');
    expect(error!.recoverable).toBe(true);
    expect(error!.message).toContain(`expected sha256:${want}, got sha256:${sha256(body)}`);
    expect(error!.details?.['download_error']).toBe(error!.message);
    expect(readdirSync(join(taskDir, 'local'))).toEqual([]);
    expect(readdirSync(taskDir)).toEqual(['local']);
  });

  it.each<[string, 'md5' | 'sha1' | 'sha512']>([['md5', 'md5'], ['sha1', 'sha1'], ['sha512', 'sha512']])('checks %s checksums too', async (_n, type) => {
    const { createHash } = await import('node:crypto');
    const body = Buffer.from(`content for ${type}`);
    server.route(`/sum/${type}`, body);
    const good = await prestart([{ source: server.url(`/sum/${type}`), options: { checksum: `${type}:${createHash(type).update(body).digest('hex')}` } }]);
    expect(good.error).toBeUndefined();
    const bad = await prestart([{ source: server.url(`/sum/${type}`), options: { checksum: `${type}:${createHash(type).update('other').digest('hex')}` } }]);
    expect(bad.error?.message).toMatch(/checksums did not match/);
  });

  it('unpacks a tar.gz archive into the destination', async () => {
    server.route('/app.tar.gz', await tarOf({ 'app/bin/run.sh': 'echo run', 'app/conf/a.conf': 'a=1' }));
    const { taskDir, error } = await prestart([{ source: server.url('/app.tar.gz'), destination: 'local/dist' }]);
    expect(error).toBeUndefined();
    expect(listing(join(taskDir, 'local/dist'))).toEqual(['app/bin/run.sh', 'app/conf/a.conf']);
    expect(readFileSync(join(taskDir, 'local/dist/app/conf/a.conf'), 'utf8')).toBe('a=1');
  });

  it('checks the checksum of the archive itself, before unpacking', async () => {
    const archive = await tarOf({ 'x.txt': 'x' });
    server.route('/summed.tgz', archive);
    const { taskDir, error } = await prestart([{ source: server.url('/summed.tgz'), options: { checksum: `sha256:${sha256(archive)}` } }]);
    expect(error).toBeUndefined();
    expect(listing(join(taskDir, 'local'))).toEqual(['x.txt']);
  });

  it('unpacks a zip archive, keeping file modes', async () => {
    server.route('/site.zip', await zipOf({ 'index.html': '<h1>hi</h1>', 'css/site.css': 'body{}' }));
    const { taskDir, error } = await prestart([{ source: server.url('/site.zip'), destination: 'local/www/' }]);
    expect(error).toBeUndefined();
    expect(listing(join(taskDir, 'local/www'))).toEqual(['css/site.css', 'index.html']);
    expect(readFileSync(join(taskDir, 'local/www/index.html'), 'utf8')).toBe('<h1>hi</h1>');
    expect(lstatSync(join(taskDir, 'local/www/index.html')).mode & 0o777).toBe(0o644);
  });

  it('keeps an archive packed with archive = false', async () => {
    const archive = await tarOf({ 'x.txt': 'x' });
    server.route('/keep.tgz', archive);
    const { taskDir, error } = await prestart([{ source: server.url('/keep.tgz'), options: { archive: 'false' } }]);
    expect(error).toBeUndefined();
    expect(readFileSync(join(taskDir, 'local/keep.tgz')).equals(archive)).toBe(true);
  });

  it('refuses a zip-slip archive and writes nothing outside (or inside) the task dir', async () => {
    const outside = tempDir();
    const slip = '../'.repeat(4) + 'evil.txt';
    server.route('/slip.zip', await zipOf({ 'ok.txt': 'fine', [`${'a'.repeat(slip.length - 8)}evil.txt`]: 'owned' }, { [`${'a'.repeat(slip.length - 8)}evil.txt`]: slip }));
    const { taskDir, error } = await prestart([{ source: server.url('/slip.zip') }], { taskDir: join(outside, 'alloc', 'task') });
    expect(error?.message).toMatch(/leaves the archive's directory \(zip slip\)/);
    expect(existsSync(join(outside, 'evil.txt'))).toBe(false);
    expect(listing(outside).filter((p) => p.endsWith('evil.txt'))).toEqual([]);
    expect(readdirSync(join(taskDir, 'local'))).toEqual([]);
  });

  it('refuses a tar whose symlink points out of the archive', async () => {
    server.route('/escape.tgz', await tarOf({ 'app/readme': 'hi', 'app/etc': 'symlink:../../../../etc' }));
    const { taskDir, error } = await prestart([{ source: server.url('/escape.tgz') }]);
    expect(error?.message).toMatch(/symlink "app\/etc" points at "..\/..\/..\/..\/etc", outside the archive/);
    expect(readdirSync(join(taskDir, 'local'))).toEqual([]);
  });

  it('refuses a tar whose symlink is absolute', async () => {
    server.route('/abs-link.tgz', await tarOf({ 'passwd': 'symlink:/etc/passwd' }));
    const { error } = await prestart([{ source: server.url('/abs-link.tgz') }]);
    expect(error?.message).toMatch(/symlink "passwd" points at the absolute path "\/etc\/passwd"/);
  });

  it('unpacks a tar with a symlink that stays inside it', async () => {
    server.route('/inner-link.tgz', await tarOf({ 'app/v1/run': 'run', 'app/current': 'symlink:v1' }));
    const { taskDir, error } = await prestart([{ source: server.url('/inner-link.tgz') }]);
    expect(error).toBeUndefined();
    expect(readFileSync(join(taskDir, 'local/app/current/run'), 'utf8')).toBe('run');
  });

  it('refuses a destination that leads out of the task dir through a symlink', async () => {
    const outside = tempDir();
    const taskDir = tempDir();
    mkdirSync(join(taskDir, 'local'));
    symlinkSync(outside, join(taskDir, 'local/out'));
    server.route('/f.txt', Buffer.from('f'));
    for (const destination of ['local/out/sub', 'local/out']) {
      const { error } = await prestart([{ source: server.url('/f.txt'), destination }], { taskDir });
      expect(error?.message).toMatch(/resolves outside the task directory/);
    }
    expect(readdirSync(outside)).toEqual([]);
  });

  it('refuses an interpolated destination outside the task dir', async () => {
    server.route('/g.txt', Buffer.from('g'));
    const { error } = await prestart([{ source: server.url('/g.txt'), destination: '${NOMAD_TASK_DIR}/../../elsewhere' }]);
    expect(error?.message).toMatch(/outside the task directory/);
  });

  it('interpolates the source and destination from the task env', async () => {
    server.route('/v/1.2.3/tool', Buffer.from('versioned'));
    const { taskDir, error } = await prestart([{ source: server.url('/v/${NOMAD_META_version}/tool'), destination: '${NOMAD_TASK_DIR}/bin' }]);
    expect(error).toBeUndefined();
    expect(readFileSync(join(taskDir, 'local/bin/tool'), 'utf8')).toBe('versioned');
  });

  it('sends the headers of the artifact block', async () => {
    server.route('/private/data', Buffer.from('secret'));
    const { error } = await prestart([{ source: server.url('/private/data'), headers: { 'X-Auth-Token': 'abc123', 'User-Agent': 'allocrun-test' } }]);
    expect(error).toBeUndefined();
    const seen = server.requests.filter((r) => r.path === '/private/data').at(-1)!;
    expect(seen.headers['x-auth-token']).toBe('abc123');
    expect(seen.headers['user-agent']).toBe('allocrun-test');
  });

  it('sends options other than go-getter\'s own as query parameters', async () => {
    let query = '';
    server.route('/q/file', (req, res) => {
      query = new URL(req.url!, 'http://x').search;
      res.end('q');
    });
    const { error } = await prestart([{ source: server.url('/q/file'), options: { token: 'abc', archive: 'false' } }]);
    expect(error).toBeUndefined();
    expect(query).toBe('?token=abc');
  });

  it('fails a download larger than the client\'s http_max_size, leaving no partial file', async () => {
    server.route('/big', Buffer.alloc(64 * 1024, 1));
    const { taskDir, error } = await prestart([{ source: server.url('/big') }], { config: { httpMaxSize: 1000 } });
    expect(error?.message).toMatch(/larger than the client's limit of 1 kB \(http_max_size\)/);
    expect(readdirSync(join(taskDir, 'local'))).toEqual([]);
    expect(readdirSync(taskDir)).toEqual(['local']);
  });

  it('fails a streamed download once it passes the size limit, even without a Content-Length', async () => {
    server.route('/stream', (_req, res) => {
      res.writeHead(200);
      for (let i = 0; i < 64; i++) res.write(Buffer.alloc(1024, 2));
      res.end();
    });
    const { error } = await prestart([{ source: server.url('/stream') }], { config: { httpMaxSize: 4096 } });
    expect(error?.message).toMatch(/http_max_size/);
  });

  it('fails a download that does not finish within the client\'s http_read_timeout', async () => {
    server.route('/slow', (_req, res) => {
      res.writeHead(200);
      res.write('a little, then nothing more');
    });
    const { taskDir, error } = await prestart([{ source: server.url('/slow') }], { config: { httpReadTimeout: 300 } });
    expect(error?.message).toMatch(/did not finish within 300ms \(the client's http_read_timeout\)/);
    expect(readdirSync(taskDir)).toEqual(['local']);
  });

  it('fails a 404 with the response code', async () => {
    const { error } = await prestart([{ source: server.url('/missing') }]);
    expect(error?.message).toMatch(/bad response code: 404/);
  });

  it('sends a password in the URL as basic auth but never shows it in the failure', async () => {
    const url = new URL(server.url('/private/missing'));
    url.username = 'deploy';
    url.password = 's3cret';
    const { error } = await prestart([{ source: url.toString() }]);
    expect(error?.message).toMatch(/bad response code: 404/);
    expect(error?.message).not.toContain('s3cret');
    expect(server.requests.at(-1)!.headers.authorization).toBe(`Basic ${Buffer.from('deploy:s3cret').toString('base64')}`);
  });

  it('copies a local file from an absolute path and a local directory from a file:// URL', async () => {
    const src = tree({ 'one.txt': '1', 'dir/two.txt': '2', 'dir/sub/three.txt': '3' });
    const { taskDir, error } = await prestart([
      { source: join(src, 'one.txt') },
      { source: `file://${join(src, 'dir')}`, destination: 'local/copied' },
    ]);
    expect(error).toBeUndefined();
    expect(listing(join(taskDir, 'local'))).toEqual(['copied/sub/three.txt', 'copied/two.txt', 'one.txt']);
  });

  it('refuses a local directory holding a symlink', async () => {
    const src = tree({ 'dir/ok.txt': 'ok', 'dir/link': 'symlink:/etc' });
    const { error } = await prestart([{ source: join(src, 'dir') }]);
    expect(error?.message).toMatch(/is a symlink: copying symlinks from a local source is disabled/);
  });

  it('writes mode = "file" to the destination path, decompressing a .gz', async () => {
    server.route('/conf.json.gz', gz('{"a":1}'));
    const { taskDir, error } = await prestart([{ source: server.url('/conf.json.gz'), mode: 'file', destination: 'local/conf/app.json' }]);
    expect(error).toBeUndefined();
    expect(readFileSync(join(taskDir, 'local/conf/app.json'), 'utf8')).toBe('{"a":1}');
  });

  it('replaces a symlink already at a file destination instead of writing through it', async () => {
    const outside = tempDir();
    writeFileSync(join(outside, 'victim'), 'untouched');
    const taskDir = tempDir();
    mkdirSync(join(taskDir, 'local'));
    symlinkSync(join(outside, 'victim'), join(taskDir, 'local/app.conf'));
    server.route('/app.conf', Buffer.from('new'));
    const { error } = await prestart([{ source: server.url('/app.conf'), mode: 'file', destination: 'local/app.conf' }], { taskDir });
    expect(error).toBeUndefined();
    expect(readFileSync(join(outside, 'victim'), 'utf8')).toBe('untouched');
    expect(lstatSync(join(taskDir, 'local/app.conf')).isFile()).toBe(true);
  });

  it('refuses an archive with more entries than decompression_file_count_limit', async () => {
    server.route('/many.tgz', await tarOf(Object.fromEntries(Array.from({ length: 6 }, (_, i) => [`f${i}`, String(i)]))));
    const { error } = await prestart([{ source: server.url('/many.tgz') }], { config: { decompressionFileCountLimit: 3 } });
    expect(error?.message).toMatch(/more than the client's limit of 3 files \(decompression_file_count_limit\)/);
  });

  it('refuses an archive that unpacks to more than decompression_size_limit', async () => {
    server.route('/bomb.tgz', await tarOf({ zeros: '0'.repeat(200_000) }));
    const { error } = await prestart([{ source: server.url('/bomb.tgz') }], { config: { decompressionSizeLimit: 10_000 } });
    expect(error?.message).toMatch(/unpacks to more than the client's limit of 10 kB \(decompression_size_limit\)/);
  });

  it('unpacks a .tar.xz archive', async () => {
    server.route('/x.tar.xz', await xz.compress(await tarOf({ 'xz/file.txt': 'from xz' }, false)));
    const { taskDir, error } = await prestart([{ source: server.url('/x.tar.xz') }]);
    expect(error).toBeUndefined();
    expect(readFileSync(join(taskDir, 'local/xz/file.txt'), 'utf8')).toBe('from xz');
  });

  it.skipIf(!hasTool('bzip2'))('unpacks a .tar.bz2 archive', async () => {
    server.route('/b.tar.bz2', compressWith('bzip2', await tarOf({ 'bz/file.txt': 'from bzip2' }, false)));
    const { taskDir, error } = await prestart([{ source: server.url('/b.tar.bz2') }]);
    expect(error).toBeUndefined();
    expect(readFileSync(join(taskDir, 'local/bz/file.txt'), 'utf8')).toBe('from bzip2');
  });

  it('skips artifacts its previous run fetched, so a restart asks the server nothing', async () => {
    server.route('/once.txt', Buffer.from('once'));
    const first = await prestart([{ source: server.url('/once.txt') }]);
    expect(server.count('/once.txt')).toBe(1);
    const again = await prestart([{ source: server.url('/once.txt') }], { taskDir: first.taskDir, previousState: first.res.state });
    expect(again.error).toBeUndefined();
    expect(again.res.done).toBe(true);
    expect(again.res.state).toEqual(first.res.state);
    expect(server.count('/once.txt')).toBe(1);
  });

  it('is Done at once for a task without artifacts, recording no event', async () => {
    const { res, events } = await prestart([]);
    expect(res.done).toBe(true);
    expect(events).toEqual([]);
  });

  const root = process.getuid?.() === 0;

  it.skipIf(!root)('gives the fetched files to the task user with chown = true (a root agent)', async () => {
    const { execFileSync } = await import('node:child_process');
    const nobody = Number(execFileSync('id', ['-u', 'nobody'], { encoding: 'utf8' }).trim());
    server.route('/owned.tgz', await tarOf({ 'o/file.txt': 'mine' }));
    const { taskDir, error } = await prestart([{ source: server.url('/owned.tgz'), destination: 'local/owned', chown: true }], { user: 'nobody' });
    expect(error).toBeUndefined();
    expect(lstatSync(join(taskDir, 'local/owned/o/file.txt')).uid).toBe(nobody);
    expect(lstatSync(join(taskDir, 'local/owned')).uid).toBe(nobody);
  });

  it.skipIf(!root)('refuses chown = true for a task without a user, and does not retry it', async () => {
    server.route('/unowned.txt', Buffer.from('x'));
    const before = server.count('/unowned.txt');
    const { error } = await prestart([{ source: server.url('/unowned.txt'), chown: true }]);
    expect(error?.message).toMatch(/chown = true: the task runs as the agent's own user/);
    expect(error?.recoverable).toBe(false);
    // Refused before the fetch: nothing was asked of the server.
    expect(server.count('/unowned.txt')).toBe(before);
  });

  it.skipIf(root)('refuses chown = true when the agent is not root', async () => {
    server.route('/unowned.txt', Buffer.from('x'));
    const { error } = await prestart([{ source: server.url('/unowned.txt'), chown: true }], { user: 'nobody' });
    expect(error?.message).toMatch(/only an agent running as root can change owners/);
  });

  it('keeps only the subdirectory named after // of an archive', async () => {
    server.route('/release.tgz', await tarOf({ 'release-1.0/bin/app': 'app', 'release-1.0/README': 'readme', 'other/x': 'x' }));
    const { taskDir, error } = await prestart([{ source: `${server.url('/release.tgz')}//release-1.0`, destination: 'local/app' }]);
    expect(error).toBeUndefined();
    expect(listing(join(taskDir, 'local/app'))).toEqual(['README', 'bin/app']);
  });

  it('stops a download at once when the task is killed, leaving nothing behind', async () => {
    server.route('/endless', (_req, res) => {
      res.writeHead(200);
      res.write('start');
    });
    const taskDir = tempDir();
    mkdirSync(join(taskDir, 'local'));
    const abort = new AbortController();
    const req = { task: { name: 't', driver: 'mock', config: {}, artifacts: [{ source: server.url('/endless'), destination: 'local/', mode: 'any' as const }] }, taskDir, env: {}, resources: {} };
    const pending = artifactHook().prestart!(req, {}, abort.signal);
    while (server.count('/endless') === 0) await new Promise((r) => setTimeout(r, 10));
    abort.abort();
    await expect(pending).rejects.toThrow();
    expect(readdirSync(taskDir)).toEqual(['local']);
    expect(readdirSync(join(taskDir, 'local'))).toEqual([]);
  });

  it.skipIf(!hasTool('openssl', ['version']))('checks TLS certificates unless insecure = true', async () => {
    const { execFileSync } = await import('node:child_process');
    const { createServer } = await import('node:https');
    const dir = tempDir();
    execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem'), '-days', '1', '-subj', '/CN=127.0.0.1'], { stdio: 'ignore' });
    const tls = createServer({ key: readFileSync(join(dir, 'key.pem')), cert: readFileSync(join(dir, 'cert.pem')) }, (_req, res) => res.end('over tls'));
    await new Promise<void>((r) => tls.listen(0, '127.0.0.1', r));
    try {
      const url = `https://127.0.0.1:${(tls.address() as { port: number }).port}/secure.txt`;
      const strict = await prestart([{ source: url }]);
      expect(strict.error?.message).toMatch(/self[- ]signed certificate/i);
      const insecure = await prestart([{ source: url, insecure: true }]);
      expect(insecure.error).toBeUndefined();
      expect(readFileSync(join(insecure.taskDir, 'local/secure.txt'), 'utf8')).toBe('over tls');
    } finally {
      tls.closeAllConnections();
      await new Promise((r) => tls.close(r));
    }
  });
});
