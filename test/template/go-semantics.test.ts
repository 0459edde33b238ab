/**
 * Go's text/template semantics, table by table: each row is a template, its data and what Go prints (or
 * the error Go gives). The outputs are Go's own, as text/template's exec_test.go and fmt's documentation
 * state them.
 */
import { describe, expect, it } from 'vitest';
import { TemplateExecError, TemplateParseError } from '../../src/template/errors.ts';
import { renderTemplate, Template } from '../../src/template/template.ts';
import { fixed } from '../../src/template/funcs.ts';

type Row = [template: string, data: unknown, expected: string];

const table = (rows: Row[]) => (name: string) =>
  it.each(rows)(`${name}: %j`, (text, data, expected) => {
    expect(renderTemplate(text, data)).toBe(expected);
  });

class Service {
  constructor(
    readonly Name: string,
    readonly Port: number,
  ) {}
  Addr(scheme: string): string {
    return `${scheme}://${this.Name}:${this.Port}`;
  }
}

describe('whitespace trimming and comments', () => {
  table([
    ['a  {{- " b " -}}  c', {}, 'a b c'],
    ['a\n\t {{- "x" }}\n b', {}, 'ax\n b'],
    ['a {{ "x" -}} \n\t b', {}, 'a xb'],
    ['{{- 3 }}', {}, '3'],
    ['{{-3}}', {}, '-3'],
    ['x {{/* a comment */}} y', {}, 'x  y'],
    ['x {{- /* trimmed comment */ -}} y', {}, 'xy'],
    ['{{/* multi\nline */}}ok', {}, 'ok'],
  ])('trim');
});

describe('range', () => {
  table([
    ['{{range $k, $v := .}}{{$k}}={{$v}};{{end}}', { b: 2, a: 1, c: 3 }, 'a=1;b=2;c=3;'],
    ['{{range .}}{{.}},{{end}}', { zeta: 'z', alpha: 'a', mid: 'm' }, 'a,m,z,'],
    ['{{range $i, $e := .}}{{$i}}:{{$e}} {{end}}', ['x', 'y'], '0:x 1:y '],
    ['{{range $e := .}}[{{$e}}]{{end}}', ['x', 'y'], '[x][y]'],
    ['{{range .}}x{{else}}empty{{end}}', [], 'empty'],
    ['{{range .}}x{{else}}empty{{end}}', undefined, 'empty'],
    ['{{range .}}{{if eq . 2}}{{continue}}{{end}}{{if eq . 4}}{{break}}{{end}}{{.}}{{end}}', [1, 2, 3, 4, 5], '13'],
    ['{{range 3}}{{.}}{{end}}', {}, '012'],
    ['{{$x := 0}}{{range .}}{{$x = .}}{{end}}{{$x}}', [1, 2, 7], '7'],
    ['{{range $i, $e := .}}{{$i}}{{end}} {{range .}}{{$}}{{end}}', ['a'], '0 [a]'],
  ])('range');

  it('sorts map keys as Go sorts strings (bytes), not by locale', () => {
    expect(renderTemplate('{{range $k, $v := .}}{{$k}}{{end}}', { b: 1, B: 2, a: 3, _: 4, '10': 5, '9': 6 })).toBe('109B_ab');
  });

  it('refuses break outside range at parse time', () => {
    expect(() => renderTemplate('{{break}}')).toThrow('{{break}} outside {{range}}');
  });
});

describe('printf as Go formats', () => {
  table([
    ['{{printf "%05d" 42}}', {}, '00042'],
    ['{{printf "%05d" -42}}', {}, '-0042'],
    ['{{printf "%-5d|" 42}}', {}, '42   |'],
    ['{{printf "%5s|" "ab"}}', {}, '   ab|'],
    ['{{printf "%d %s %v %t" 7 "s" 1.5 true}}', {}, '7 s 1.5 true'],
    ['{{printf "%q" "a\\"b\\n"}}', {}, '"a\\"b\\n"'],
    ['{{printf "%x %X %#x %o %b" 255 255 255 8 5}}', {}, 'ff FF 0xff 10 101'],
    ['{{printf "%x" "hi"}}', {}, '6869'],
    ['{{printf "%.2f" 3.14159}}', {}, '3.14'],
    ['{{printf "%f" 2.5}}', {}, '2.500000'],
    ['{{printf "%8.3f|" 3.14159}}', {}, '   3.142|'],
    ['{{printf "%e" 123456.789}}', {}, '1.234568e+05'],
    ['{{printf "%g" 0.000012345}}', {}, '1.2345e-05'],
    ['{{printf "%v" 1000000.5}}', {}, '1.0000005e+06'],
    ['{{ . }}', 1e21, '1e+21'],
    ['{{ . }} {{ printf "%v" . }}', 0.1, '0.1 0.1'],
    ['{{printf "%v" .}}', [1, 'a', [2]], '[1 a [2]]'],
    ['{{printf "%v" .}}', { b: 1, a: 'x' }, 'map[a:x b:1]'],
    ['{{printf "%+d %+d" 5 -5}}', {}, '+5 -5'],
    ['{{printf "%c%c" 72 105}}', {}, 'Hi'],
    ['{{printf "%q" 65}}', {}, "'A'"],
    ['{{printf "%U" 65}}', {}, 'U+0041'],
    ['{{printf "%d%%" 50}}', {}, '50%'],
    ['{{printf "%d" "x"}}', {}, '%!d(string=x)'],
    ['{{printf "%s"}}', {}, '%!s(MISSING)'],
    ['{{printf "%d" 1 2}}', {}, '1%!(EXTRA int=2)'],
    ['{{printf "%*d" 4 7}}', {}, '   7'],
    ['{{printf "%T %T %T" 1 "s" .}}', [1], 'int string []interface {}'],
    ['{{print 1 2 "a" "b" 3}}', {}, '1 2ab3'],
    ['{{println 1 "a"}}', {}, '1 a\n'],
    ['{{ 3 | printf "%d-%s" "z" }}', {}, '%!d(string=z)-%!s(int=3)'],
    ['{{ "z" | printf "%s-%s" "y" }}', {}, 'y-z'],
  ])('printf');
});

describe('define, template and block', () => {
  table([
    ['{{define "x"}}X{{.}}{{end}}{{template "x" 5}}', {}, 'X5'],
    ['{{define "x"}}[{{.}}]{{end}}{{template "x"}}', 9, '[<no value>]'],
    ['{{define "row"}}{{.Name}}={{.Port}}{{end}}{{range .}}{{template "row" .}};{{end}}', [new Service('a', 1), new Service('b', 2)], 'a=1;b=2;'],
    ['{{block "b" .}}default {{.}}{{end}}', 'dot', 'default dot'],
    ['{{define "r"}}{{if .}}{{.}}{{template "r" (slice . 1)}}{{end}}{{end}}{{template "r" "abc"}}', {}, 'abcbcc'],
  ])('define');

  it('lets a later parse override a block, as Go sets of templates do', () => {
    const t = new Template('page').parse('<{{block "b" .}}default{{end}}>').parse('{{define "b"}}override {{.}}{{end}}');
    expect(t.execute('x')).toBe('<override x>');
  });

  it('refuses two definitions of one name in one text', () => {
    expect(() => renderTemplate('{{define "b"}}one{{end}}{{define "b"}}two{{end}}')).toThrow('template: multiple definition of template "b"');
  });

  it('names an undefined template', () => {
    expect(() => renderTemplate('{{template "nope"}}')).toThrow('template "nope" not defined');
  });
});

describe('if, else if, with and variables', () => {
  table([
    ['{{if eq .A 1}}one{{else if eq .A 2}}two{{else}}other{{end}}', { A: 2 }, 'two'],
    ['{{if eq .A 1}}one{{else if eq .A 2}}two{{else}}other{{end}}', { A: 3 }, 'other'],
    ['{{if .}}t{{else}}f{{end}}', 0, 'f'],
    ['{{if .}}t{{else}}f{{end}}', {}, 'f'],
    ['{{if .}}t{{else}}f{{end}}', new Service('x', 0), 't'],
    ['{{with .A}}{{.}}{{else}}none{{end}}', { A: 'v' }, 'v'],
    ['{{with .A}}{{.}}{{else with .B}}b={{.}}{{end}}', { B: 1 }, 'b=1'],
    ['{{$x := 1}}{{$x = 2}}{{$x}}', {}, '2'],
    ['{{$x := "outer"}}{{if true}}{{$x := "inner"}}{{$x}}{{end}} {{$x}}', {}, 'inner outer'],
    ['{{with $x := .A}}{{$x}}{{end}}', { A: 'a' }, 'a'],
    ['{{.A.B.C}}', { A: { B: { C: 'deep' } } }, 'deep'],
    ['{{(index . 0).Name}}', [new Service('svc', 80)], 'svc'],
    ['{{.Addr "http"}}', new Service('web', 8080), 'http://web:8080'],
    ['{{"http" | .Addr}}', new Service('web', 8080), 'http://web:8080'],
  ])('control');
});

describe('builtins', () => {
  table([
    ['{{ and 1 0 }} {{ and 1 2 }} {{ or 0 "" "x" }} {{ or 0 "" }} {{ not 0 }}', {}, '0 2 x  true'],
    ['{{ and false .Missing.Field }}', {}, 'false'],
    ['{{ lt 1 2 }} {{ le 2 2 }} {{ gt "b" "a" }} {{ ge 1 2 }} {{ ne 1 2 }}', {}, 'true true true false true'],
    ['{{ eq "a" "b" "a" }} {{ eq .Missing "x" }}', {}, 'true false'],
    ['{{ len . }} {{ len "héllo" }}', [1, 2, 3], '3 6'],
    ['{{ index . 1 }} {{ index . 5 | print }}', { 1: 'one' }, 'one <nil>'],
    ['{{ index .M "k" }} {{ index .L 1 0 }}', { M: { k: 'v' }, L: [[1], [2]] }, 'v 2'],
    ['{{ slice . 1 2 }} {{ slice "hello" 1 3 }}', [1, 2, 3], '[2] el'],
    ['{{ html "<a href=\\"x\\">&\'" }}', {}, '&lt;a href=&#34;x&#34;&gt;&amp;&#39;'],
    ['{{ js "a\'b\\"<=>" }}', {}, "a\\'b\\\"\\u003C\\u003D\\u003E"],
    ['{{ urlquery "a b&c=d/é" }}', {}, 'a+b%26c%3Dd%2F%C3%A9'],
    ['{{ call .F 2 3 }}', { F: (a: number, b: number) => a * b }, '6'],
  ])('builtin');

  it('checks argument counts as Go does', () => {
    expect(() => renderTemplate('{{ lt 1 }}')).toThrow('wrong number of args for lt: want 2 got 1');
    expect(() => renderTemplate('{{ index }}')).toThrow('wrong number of args for index: want at least 1 got 0');
  });

  it('refuses comparing a number with a string', () => {
    expect(() => renderTemplate('{{ eq 1 "1" }}')).toThrow('error calling eq: incompatible types for comparison');
  });

  it('reports an index out of range', () => {
    expect(() => renderTemplate('{{ index . 5 }}', [1])).toThrow('error calling index: index out of range: 5');
  });
});

describe('missing keys', () => {
  it('prints <no value> for a missing map key by default', () => {
    expect(renderTemplate('[{{.Missing}}]', { present: 1 })).toBe('[<no value>]');
  });

  it('fails on a missing map key with missingkey=error, naming the key and where', () => {
    const t = new Template('cfg', { missingKey: 'error' }).parse('line one\n{{ .Present }} {{.Missing}}');
    expect(() => t.execute({ Present: 1 })).toThrow(TemplateExecError);
    expect(() => t.execute({ Present: 1 })).toThrow('template: cfg:2:17: executing "cfg" at <.Missing>: map has no entry for key "Missing"');
  });

  it('fails on a missing struct field whatever the option', () => {
    expect(() => renderTemplate('{{.Nope}}', new Service('a', 1))).toThrow("can't evaluate field Nope in type *Service");
  });

  it('fails on a nil pointer', () => {
    expect(() => renderTemplate('{{.A.B}}', { A: null })).toThrow('nil pointer evaluating');
  });
});

describe('delimiters, functions and parse errors', () => {
  it('takes custom delimiters and leaves the default ones as text', () => {
    expect(renderTemplate('[[ .A ]] {{ .A }} [[- " x" ]]', { A: 1 }, { leftDelim: '[[', rightDelim: ']]' })).toBe('1 {{ .A }} x');
  });

  it('calls functions given to the set, piping the previous value as the last argument', () => {
    const funcs = { twice: fixed(1, (s: string) => s + s) };
    expect(renderTemplate('{{ "ab" | twice | printf "%s!" }}', {}, { funcs })).toBe('abab!');
  });

  it.each([
    ['{{ nope }}', 'template: t:1: function "nope" not defined'],
    ['{{ $x }}', 'template: t:1: undefined variable "$x"'],
    ['{{ if true }}x', 'template: t:1: unexpected EOF'],
    ['a\n{{ end }}', 'template: t:2: unexpected {{end}}'],
    ['{{ .A', 'template: t:1: unclosed action'],
    ['{{ "unterminated }}', 'template: t:1: unterminated quoted string'],
    ['{{ 3 | 4 }}', 'template: t:1: non executable command in pipeline stage 2'],
    ['{{/* open', 'template: t:1: unclosed comment'],
    ['{{ 1 . }}x', "template: t:1:3: executing \"t\" at <1>: can't give argument to non-function 1"],
  ])('reports %j as Go does', (text, message) => {
    expect(() => new Template('t').parse(text).execute({})).toThrow(message);
  });

  it('throws typed errors', () => {
    expect(() => renderTemplate('{{')).toThrow(TemplateParseError);
  });

  it('stops unbounded recursion with an error instead of a crash', () => {
    expect(() => renderTemplate('{{define "r"}}{{template "r"}}{{end}}{{template "r"}}')).toThrow('exceeded maximum template depth');
  });
});
