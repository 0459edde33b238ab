import { describe, expect, it } from 'vitest';
import { parseJob, SpecError, validateAllocSpec, type JobFileFormat } from '../../src/jobspec/index.ts';
import { parseSource, parseChecksum, relativeDestination } from '../../src/jobspec/artifact-source.ts';
import { problemsOf } from './problems-of.ts';

const hcl = (artifacts: string) => `job "web" {
  group "app" {
    task "server" {
      driver = "raw_exec"
      config {
        command = "python3"
      }
${artifacts}
    }
  }
}
`;

const SHA = 'a'.repeat(64);
const expected = [
  { source: 'https://example.com/app.tgz', destination: 'local/app', mode: 'any', options: { checksum: `sha256:${SHA}` }, headers: { 'X-Token': 'abc' } },
  { source: 'https://example.com/run.sh', destination: 'local/run.sh', mode: 'file', options: { archive: 'false' } },
];

describe('the artifact block', () => {
  it.each<[string, JobFileFormat, string]>([
    ['HCL', 'hcl', hcl(`      artifact {
        source      = "https://example.com/app.tgz"
        destination = "local/app"
        options {
          checksum = "sha256:${SHA}"
        }
        headers {
          X-Token = "abc"
        }
      }
      artifact {
        source = "https://example.com/run.sh"
        mode   = "file"
        options {
          archive = false
        }
      }`)],
    ['JSON', 'json', JSON.stringify({ job: { web: { group: { app: { task: { server: { driver: 'raw_exec', config: { command: 'python3' }, artifact: [
      { source: 'https://example.com/app.tgz', destination: 'local/app', options: { checksum: `sha256:${SHA}` }, headers: { 'X-Token': 'abc' } },
      { source: 'https://example.com/run.sh', mode: 'file', options: { archive: false } },
    ] } } } } } } })],
    ['YAML', 'yaml', `job:
  web:
    group:
      app:
        task:
          server:
            driver: raw_exec
            config:
              command: python3
            artifact:
              - source: https://example.com/app.tgz
                destination: local/app
                options:
                  checksum: sha256:${SHA}
                headers:
                  X-Token: abc
              - source: https://example.com/run.sh
                mode: file
                options:
                  archive: false
`],
    ['Nomad API JSON', 'json', JSON.stringify({ Job: { ID: 'web', TaskGroups: [{ Name: 'app', Tasks: [{ Name: 'server', Driver: 'raw_exec', Config: { command: 'python3' }, Artifacts: [
      { GetterSource: 'https://example.com/app.tgz', GetterOptions: { checksum: `sha256:${SHA}` }, GetterHeaders: { 'X-Token': 'abc' }, GetterMode: 'any', GetterInsecure: false, RelativeDest: 'local/app', Chown: false },
      { GetterSource: 'https://example.com/run.sh', GetterOptions: { archive: 'false' }, GetterHeaders: null, GetterMode: 'file', RelativeDest: 'local/run.sh' },
    ] }] }] } })],
  ])('loads artifacts from %s, with Nomad\'s defaults and no warning', async (_name, format, text) => {
    const job = await parseJob(text, { format });
    expect(job.allocs[0]!.tasks[0]!.artifacts).toEqual(expected);
    expect(job.warnings).toEqual([]);
  });

  it('defaults the destination to local/ and, in file mode, to local/<file name>', async () => {
    const job = await parseJob(hcl(`      artifact {
        source = "https://example.com/a/b.tar.gz"
      }
      artifact {
        source = "/opt/files/tool.bin"
        mode   = "file"
      }`), { format: 'hcl' });
    expect(job.allocs[0]!.tasks[0]!.artifacts!.map((a) => a.destination)).toEqual(['local/', 'local/tool.bin']);
  });

  it.each<[string, string, string]>([
    ['an s3:: source', 'source = "s3::https://s3.amazonaws.com/bucket/foo"', 'job.web.group.app.task.server.artifact[0].source: Amazon S3 sources are not supported'],
    ['a gcs:: source', 'source = "gcs::https://www.googleapis.com/storage/v1/b/o"', 'job.web.group.app.task.server.artifact[0].source: Google Cloud Storage sources are not supported'],
    ['a git:: source', 'source = "git::https://github.com/hashicorp/nomad"', 'job.web.group.app.task.server.artifact[0].source: git sources are not supported'],
    ['an hg:: source', 'source = "hg::http://example.com/repo"', 'job.web.group.app.task.server.artifact[0].source: Mercurial sources are not supported'],
    ['a github.com shorthand', 'source = "github.com/hashicorp/nomad"', 'job.web.group.app.task.server.artifact[0].source: git sources are not supported'],
    ['an ftp URL', 'source = "ftp://example.com/x"', 'job.web.group.app.task.server.artifact[0].source: go-getter has no "ftp" getter'],
    ['a relative path', 'source = "files/x.tgz"', 'job.web.group.app.task.server.artifact[0].source: "files/x.tgz" is neither a URL nor an absolute path'],
    ['a checksum of an unknown type', 'source = "https://e.com/x"\n        options {\n          checksum = "crc32:abcd"\n        }', 'job.web.group.app.task.server.artifact[0].options.checksum: unsupported checksum type "crc32"'],
    ['a checksum that is not hex', 'source = "https://e.com/x"\n        options {\n          checksum = "sha256:xyz"\n        }', 'job.web.group.app.task.server.artifact[0].options.checksum: checksum "sha256:xyz" is not "type:hex"'],
    ['a checksum of the wrong length', 'source = "https://e.com/x"\n        options {\n          checksum = "md5:abcd"\n        }', 'job.web.group.app.task.server.artifact[0].options.checksum: a md5 checksum has 32 hex digits, this one has 4'],
    ['a checksum given in the URL', 'source = "https://e.com/x?checksum=sha1:zz"', 'job.web.group.app.task.server.artifact[0].options.checksum: checksum "sha1:zz" is not "type:hex"'],
    ['an unknown archive type', 'source = "https://e.com/x"\n        options {\n          archive = "rar"\n        }', 'job.web.group.app.task.server.artifact[0].options.archive: archive "rar" is no archive type'],
    ['a destination that leaves the task dir', 'source = "https://e.com/x"\n        destination = "../x"', 'job.web.group.app.task.server.artifact[0].destination: "../x" escapes the task directory'],
    ['an absolute destination', 'source = "https://e.com/x"\n        destination = "/etc"', 'job.web.group.app.task.server.artifact[0].destination: "/etc" is an absolute path'],
    ['a .gz file outside file mode', 'source = "https://e.com/x.gz"', 'job.web.group.app.task.server.artifact[0].mode: a .gz file unpacks to one file'],
    ['dir mode for a plain download', 'source = "https://e.com/x.bin"\n        mode = "dir"', 'job.web.group.app.task.server.artifact[0].mode: mode = "dir" needs an archive'],
    ['an unknown mode', 'source = "https://e.com/x"\n        mode = "folder"', 'job.web.group.app.task.server.artifact[0].mode: '],
    ['an unknown field', 'source = "https://e.com/x"\n        sorce = "y"', 'job.web.group.app.task.server.artifact[0].sorce: unknown key "sorce"; did you mean "source"?'],
    ['a zstd archive', 'source = "https://e.com/x.tar.zst"', 'job.web.group.app.task.server.artifact[0].source: zstd archives cannot be unpacked here'],
  ])('refuses %s, naming the field', async (_what, body, wanted) => {
    const problems = await problemsOf(hcl(`      artifact {\n        ${body}\n      }`));
    expect(problems.some((p) => p.startsWith(wanted)), problems.join('\n')).toBe(true);
  });

  it('refuses a header name HTTP cannot send', async () => {
    const text = JSON.stringify({ job: { web: { group: { app: { task: { server: { driver: 'raw_exec', config: { command: 'x' }, artifact: { source: 'https://e.com/x', headers: { 'X Token': 'a' } } } } } } } } });
    expect(await problemsOf(text, 'json')).toEqual([expect.stringMatching(/^job\.web\.group\.app\.task\.server\.artifact\[0\]\.headers\["X Token"\]: "X Token" is not an HTTP header name/)]);
  });

  it('names the API field and line of a bad source in Nomad API JSON', async () => {
    const text = JSON.stringify({ Job: { ID: 'web', TaskGroups: [{ Name: 'app', Tasks: [{ Name: 'server', Driver: 'raw_exec', Config: { command: 'x' }, Artifacts: [{ GetterSource: 'git::https://example.com/r.git' }] }] }] } }, null, 2);
    const err = await parseJob(text, { format: 'json', file: 'job.json' }).then(() => undefined, (e: unknown) => e);
    expect(err).toBeInstanceOf(SpecError);
    const p = (err as SpecError).problems[0]!;
    expect(p.message).toMatch(/^git sources are not supported/);
    expect(text.split('\n')[p.line! - 1]).toContain('"GetterSource": "git::https://example.com/r.git"');
  });

  it('leaves a source with ${...} to the hook, which interpolates it first', async () => {
    const job = await parseJob(hcl(`      artifact {
        source      = "https://example.com/\${NOMAD_META_version}/app"
        destination = "\${NOMAD_TASK_DIR}/bin"
      }`), { format: 'hcl' });
    expect(job.allocs[0]!.tasks[0]!.artifacts![0]).toMatchObject({ source: 'https://example.com/${NOMAD_META_version}/app', destination: '${NOMAD_TASK_DIR}/bin' });
  });

  it('checks artifacts of a spec built in code by the same rules', () => {
    const spec = { id: 'a1', job: 'j', group: 'g', type: 'batch' as const, tasks: [{ name: 't', driver: 'mock', config: {}, artifacts: [{ source: 'git::x', destination: '../up', mode: 'any' as const }] }] };
    expect(() => validateAllocSpec(spec)).toThrow(SpecError);
    try {
      validateAllocSpec(spec);
    } catch (err) {
      expect((err as SpecError).problems.map((p) => p.path).sort()).toEqual(['tasks[0].artifacts[0].destination', 'tasks[0].artifacts[0].source']);
    }
  });
});

describe("go-getter's reading of a source", () => {
  it('moves options into the query and takes its own parameters out', () => {
    const s = parseSource('https://example.com/dl/app.zip?token=1', { checksum: `md5:${'0'.repeat(32)}`, archive: 'false', version: '2' });
    expect(s.getter).toBe('http');
    expect(s.url!.toString()).toBe('https://example.com/dl/app.zip?token=1&version=2');
    expect(s.checksum).toEqual({ type: 'md5', hex: '0'.repeat(32) });
    expect(s.archive).toBeUndefined();
    expect(s.filename).toBe('app.zip');
  });

  it.each<[string, string | undefined]>([
    ['https://e.com/a.tar.gz', 'tar.gz'], ['https://e.com/a.tgz', 'tar.gz'], ['https://e.com/a.tar.bz2', 'tar.bz2'],
    ['https://e.com/a.tar.xz', 'tar.xz'], ['https://e.com/a.zip', 'zip'], ['https://e.com/a.gz', 'gz'], ['https://e.com/a.bin', undefined],
  ])('unpacks %s as %s', (source, kind) => {
    expect(parseSource(source).archive).toBe(kind);
  });

  it('reads local sources from an absolute path or a file:// URL', () => {
    expect(parseSource('/srv/files/a.tgz')).toMatchObject({ getter: 'file', path: '/srv/files/a.tgz', archive: 'tar.gz' });
    expect(parseSource('file:///srv/files/a%20b.txt')).toMatchObject({ getter: 'file', path: '/srv/files/a b.txt', filename: 'a b.txt' });
    expect(() => parseSource('file://otherhost/x')).toThrow(/names host/);
  });

  it('reads a subdirectory after //', () => {
    expect(parseSource('https://e.com/a.tgz//inner/dir?x=1')).toMatchObject({ subdir: 'inner/dir', archive: 'tar.gz' });
    expect(parseSource('https://e.com/a.tgz//inner/dir?x=1').url!.toString()).toBe('https://e.com/a.tgz?x=1');
  });

  it('guesses the type of a bare digest by its length', () => {
    expect(parseChecksum('A'.repeat(40))).toEqual({ type: 'sha1', hex: 'a'.repeat(40) });
    expect(() => parseChecksum('abc')).toThrow(/no known digest/);
  });

  it('keeps a destination inside the task dir', () => {
    expect(relativeDestination('local/../local/x/')).toBe('local/x/');
    expect(() => relativeDestination('local/../../x')).toThrow(/escapes the task directory/);
  });
});
