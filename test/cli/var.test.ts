/**
 * `allocrun var get|put|list|purge` (src/cli/var.ts) against an agent serving its socket in this process:
 * Nomad's create-only default and check-and-set flags, items from arguments, files and a specification,
 * listing with a prefix and pages, and errors that name indexes and paths but never an item's value.
 */
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from '../api/agent-process.ts';
import { cleanUp, freshDir, serve, type Served } from '../api/in-process-agent.ts';
import { ROOT, runCli } from './spawn-cli.ts';

const env = { ALLOCRUN_TOKEN: '', ALLOCRUN_TOKEN_FILE: '', NOMAD_TOKEN: '', ALLOCRUN_ADDR: '', ALLOCRUN_DATA_DIR: '' };
let s: Served;
const cli = (...args: string[]) => runCli([...args, '--data-dir', s.dataDir], { env });
const SECRET = 's3cr3t-value-never-in-errors';

beforeAll(async () => {
  s = await serve();
}, 60_000);
afterAll(cleanUp, 60_000);

describe('allocrun var', { timeout: 120_000 }, () => {
  it('puts a variable from KEY=VALUE items and gets it back as JSON, as a table and item by item', async () => {
    const made = await cli('var', 'put', 'app/db', 'user=app', `password=${SECRET}`, '-out', 'none');
    expect([made.code, made.stderr]).toEqual([0, '']);
    expect(made.stdout).toMatch(/^Created variable "app\/db" with modify index \d+\n$/);
    const index = Number(/index (\d+)/.exec(made.stdout)![1]);

    const json = await cli('var', 'get', 'app/db', '-out', 'json');
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toMatchObject({ Namespace: 'default', Path: 'app/db', ModifyIndex: index, Items: { user: 'app', password: SECRET } });

    const table = await cli('var', 'get', '/app/db/', '-out', 'table');
    expect(table.stdout).toMatch(/^Namespace\s+= default\nPath\s+= app\/db\nCreate Time\s+= \d{4}-\d\d-\d\dT/);
    expect(table.stdout).toContain(`Check Index = ${index}\n\nItems\npassword = ${SECRET}\nuser     = app\n`);

    const item = await cli('var', 'get', 'app/db', '-item', 'password');
    expect([item.code, item.stdout]).toEqual([0, SECRET]);
    const missing = await cli('var', 'get', 'app/db', '-item', 'nope');
    expect([missing.code, missing.stderr]).toEqual([1, 'allocrun: var get: the variable "app/db" has no item "nope" (its items: password, user)\n']);
  });

  it('creates only, by default: an existing variable is left alone and the error names its index, not its items', async () => {
    const first = await cli('var', 'put', 'only/once', `k=${SECRET}`);
    expect(first.code).toBe(0);
    const index = JSON.parse(first.stdout).ModifyIndex as number;
    const again = await cli('var', 'put', 'only/once', 'k=other');
    expect(again.code).toBe(1);
    expect(again.stderr).toBe(`allocrun: var put: check-and-set conflict: expected index 0, but the variable "only/once" is at index ${index}; use -check-index ${index} to act on this version, or -force to write whatever is there\n`);
    expect(again.stderr).not.toContain(SECRET);
    expect(JSON.parse((await cli('var', 'get', 'only/once')).stdout).Items).toEqual({ k: SECRET });

    const stale = await cli('var', 'put', 'only/once', 'k=v2', '-check-index', String(index - 1));
    expect([stale.code, stale.stderr]).toEqual([1, `allocrun: var put: check-and-set conflict: expected index ${index - 1}, but the variable "only/once" is at index ${index}; use -check-index ${index} to act on this version, or -force to write whatever is there\n`]);
    const checked = await cli('var', 'put', 'only/once', 'k=v2', '-check-index', String(index));
    expect(checked.code).toBe(0);
    expect(JSON.parse(checked.stdout)).toMatchObject({ Items: { k: 'v2' }, CreateIndex: index });
    const forced = await cli('var', 'put', 'only/once', 'k=v3', '-force');
    expect([forced.code, JSON.parse(forced.stdout).Items]).toEqual([0, { k: 'v3' }]);
  });

  it('reads item values from files and whole variables from a JSON specification, KEY= removing an item', async () => {
    const dir = freshDir();
    const certFile = join(dir, 'cert.pem');
    writeFileSync(certFile, '-----BEGIN CERT-----\nabc\n-----END CERT-----\n');
    const fromFile = await cli('var', 'put', 'tls', `cert=@${certFile}`);
    expect([fromFile.code, JSON.parse(fromFile.stdout).Items]).toEqual([0, { cert: '-----BEGIN CERT-----\nabc\n-----END CERT-----\n' }]);

    const specFile = join(dir, 'spec.json');
    writeFileSync(specFile, JSON.stringify({ Path: 'from/spec', Items: { a: '1', b: '2', c: '3' } }));
    const fromSpec = await cli('var', 'put', `@${specFile}`, 'b=20', 'c=');
    expect(fromSpec.code, fromSpec.stderr).toBe(0);
    expect(JSON.parse(fromSpec.stdout)).toMatchObject({ Path: 'from/spec', Items: { a: '1', b: '20' } });

    // A specification read back carries its ModifyIndex: writing it again is checked against that index.
    writeFileSync(specFile, (await cli('var', 'get', 'from/spec')).stdout);
    expect((await cli('var', 'put', `@${specFile}`, 'a=one')).code).toBe(0);
    const stale = await cli('var', 'put', `@${specFile}`, 'a=uno');
    expect([stale.code, stale.stderr]).toEqual([1, expect.stringMatching(/check-and-set conflict/)]);

    const broken = join(dir, 'broken.json');
    writeFileSync(broken, `{"Items": {"k": "${SECRET}"`);
    const bad = await cli('var', 'put', `@${broken}`);
    expect([bad.code, bad.stderr]).toEqual([1, `allocrun: var put: ${broken} is not valid JSON\n`]);
  });

  it('reads an item value, or a whole specification, from standard input', async () => {
    const viaStdin = (input: string, ...args: string[]) =>
      new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
        const child = spawn(process.execPath, [join(ROOT, 'bin/allocrun.js'), ...args, '--data-dir', s.dataDir], { cwd: ROOT, env: { ...process.env, ...env } });
        let stdout = '';
        let stderr = '';
        child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
        child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
        child.on('close', (code) => resolve({ code, stdout, stderr }));
        child.stdin.end(input);
      });
    const item = await viaStdin(`${SECRET}\n`, 'var', 'put', 'stdin/item', 'key=-', 'other=x');
    expect([item.code, item.stderr]).toEqual([0, '']);
    expect(JSON.parse(item.stdout).Items).toEqual({ key: `${SECRET}\n`, other: 'x' });
    const spec = await viaStdin(JSON.stringify({ Items: { a: '1' } }), 'var', 'put', 'stdin/spec', '-', 'b=2', '-in', 'json');
    expect([spec.code, JSON.parse(spec.stdout)]).toEqual([0, expect.objectContaining({ Path: 'stdin/spec', Items: { a: '1', b: '2' } })]);
    const twice = await viaStdin('{}', 'var', 'put', 'stdin/twice', '-', 'b=-');
    expect([twice.code, twice.stderr]).toEqual([2, expect.stringContaining('standard input can be read only once')]);
  });

  it('answers the agent\'s refusals and bad command lines with what is wrong', async () => {
    const reserved = await cli('var', 'put', 'nomad/other', `k=${SECRET}`);
    expect([reserved.code, reserved.stderr]).toEqual([1, 'allocrun: only paths at "nomad/jobs" or "nomad/job-templates" and below are valid paths under the top-level "nomad" directory\n']);
    const noData = await cli('var', 'put', 'app/x');
    expect(noData.code).toBe(2);
    expect(noData.stderr).toContain('must supply data');
    expect((await cli('var', 'put', 'app/x', 'k=v', '-check-index', 'x')).stderr).toContain('-check-index must be a non-negative integer');
    expect((await cli('var', 'put', 'app/x', 'k=v', '-check-index', '3', '-force')).stderr).toContain('contradict');
    const absent = await cli('var', 'get', 'not/there');
    expect([absent.code, absent.stderr]).toEqual([1, 'allocrun: var get: no variable at "not/there"\n']);
  });

  it('lists paths by prefix and namespace, in pages, never with items', async () => {
    for (const p of ['list/a', 'list/b', 'list/c']) expect((await cli('var', 'put', p, `k=${SECRET}`)).code).toBe(0);
    expect((await cli('var', 'put', 'list/a', 'k=v', '-namespace', 'prod')).code).toBe(0);
    const table = await cli('var', 'list', 'list/', '-out', 'table');
    expect(table.stdout).toMatch(/^Path\s+Last Updated\nlist\/a\s+\d{4}-.*\nlist\/b\s+.*\nlist\/c\s+.*\n$/);
    expect(table.stdout).not.toContain(SECRET);
    const all = await cli('var', 'list', 'list/a', '-namespace', '*', '-out', 'table');
    expect(all.stdout).toMatch(/^Namespace\s+Path\s+Last Updated\ndefault\s+list\/a\s+.*\nprod\s+list\/a\s+.*\n$/);
    const page = await cli('var', 'list', 'list/', '-per-page', '2', '-out', 'table');
    expect(page.stdout).toMatch(/list\/b[^\n]*\n\nNext page token: default\.list\/c\n$/);
    const rest = await cli('var', 'list', 'list/', '-page-token', 'default.list/c', '-out', 'json');
    expect(JSON.parse(rest.stdout).map((m: { Path: string }) => m.Path)).toEqual(['list/c']);
    expect((await cli('var', 'list', 'nothing/')).stdout).toBe('[]\n');
  });

  it('purges a variable, with a check index only at its current one', async () => {
    const index = JSON.parse((await cli('var', 'put', 'doomed', `k=${SECRET}`)).stdout).ModifyIndex as number;
    const stale = await cli('var', 'purge', 'doomed', '-check-index', String(index + 1));
    expect([stale.code, stale.stderr]).toEqual([1, `allocrun: var purge: check-and-set conflict: expected index ${index + 1}, but the variable "doomed" is at index ${index}; use -check-index ${index} to act on this version\n`]);
    const done = await cli('var', 'purge', 'doomed', '-check-index', String(index));
    expect([done.code, done.stdout]).toEqual([0, 'Successfully purged variable "doomed"!\n']);
    expect((await call(s.socket, 'GET', '/v1/var/doomed')).status).toBe(404);
  });
});
