import { describe, expect, it } from 'vitest';
import { locateInHcl, scanHcl } from '../../src/jobspec/hcl-locator.ts';
import { LineIndex } from '../../src/jobspec/positions.ts';
import type { PathSegment } from '../../src/jobspec/spec-error.ts';

/** The line:column where `path` is written in `src`. */
function where(src: string, ...path: PathSegment[]): string | undefined {
  const offset = locateInHcl(scanHcl(src), path);
  if (offset === undefined) return undefined;
  const { line, column } = new LineIndex(src).at(offset);
  return `${line}:${column}`;
}

const job = `job "web" {
  group "a" {
    task "app" {
      driver = "mock"
    }
  }
  group "b" {
    # a comment with a brace {
    task "app" {
      /* a block comment with } braces { */
      driver = "mock" // and a line comment }
      env = {
        HOME = "/x"
        "QUOTED" = "\${"}"}"
      }
      config {
        script = <<-EOT
          kill_timeout = "nope"
          }}}
          EOT
        args = ["{", "}"]
      }
      kill_timeout = "5s"
    }
  }
}
`;

describe('the HCL locator', () => {
  it('finds a labelled block by its label, not the first of its type', () => {
    expect(where(job, 'job', 'web', 'group', 'b', 'task', 'app')).toBe('9:5');
    expect(where(job, 'job', 'web', 'group', 'a', 'task', 'app')).toBe('3:5');
  });

  it('skips braces in comments, strings, templates and heredocs', () => {
    expect(where(job, 'job', 'web', 'group', 'b', 'task', 'app', 'kill_timeout')).toBe('23:7');
    expect(where(job, 'job', 'web', 'group', 'b', 'task', 'app', 'config', 'args')).toBe('21:9');
  });

  it('finds the keys of an object-literal attribute', () => {
    expect(where(job, 'job', 'web', 'group', 'b', 'task', 'app', 'env', 'QUOTED')).toBe('14:9');
  });

  it('stops at the deepest part of the path it finds', () => {
    expect(where(job, 'job', 'web', 'group', 'b', 'task', 'app', 'missing')).toBe('9:5');
    expect(where(job, 'job', 'web', 'group', 'zzz', 'task')).toBe('2:3');
    expect(where(job, 'nothing')).toBeUndefined();
  });

  it('picks the n-th repeat of a block', () => {
    const src = 'job "j" {\n  restart {\n  }\n  restart { attempts = 1 }\n}\n';
    expect(where(src, 'job', 'j', 'restart', 1)).toBe('4:3');
    expect(where(src, 'job', 'j', 'restart', 1, 'attempts')).toBe('4:13');
  });

  it('never throws on text the HCL parser would refuse', () => {
    for (const src of ['}}}{{{', 'job "x" {', '"unterminated', '<<EOT\nno end', 'a = {\n b = [\n', 'job "x" { a = "${"', '\u0000\uFFFF']) {
      expect(() => locateInHcl(scanHcl(src), ['job', 'x', 'a'])).not.toThrow();
    }
  });
});
