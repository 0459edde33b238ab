/**
 * A template's check before anything runs: it must parse (with consul-template's functions known) and
 * call no function that needs Consul or Vault. Each problem is a message naming the function or where the
 * parse failed.
 */
import { consulTemplateFuncs, newTracker, UNAVAILABLE_FUNCS } from './consul-template-funcs.ts';
import { TemplateParseError } from './errors.ts';
import type { ArgNode, Node, PipeNode } from './nodes.ts';
import { Template } from './template.ts';

const NO_SCOPE = { env: {}, namespace: 'default', readFile: () => undefined, now: () => new Date(0) };

/** Parses template text as the template hook will; throws TemplateParseError. */
export function parseConsulTemplate(text: string, opts: { name: string; leftDelim?: string; rightDelim?: string }): Template {
  return new Template(opts.name, { ...opts, funcs: consulTemplateFuncs(NO_SCOPE, newTracker()) }).parse(text);
}

/** Problems with a template's text: a parse error, or each function it calls that allocrun cannot offer. */
export function templateProblems(text: string, opts: { name: string; leftDelim?: string; rightDelim?: string }): string[] {
  let tmpl: Template;
  try {
    tmpl = parseConsulTemplate(text, opts);
  } catch (err) {
    if (err instanceof TemplateParseError) return [err.message];
    throw err;
  }
  const problems: string[] = [];
  const seen = new Set<string>();
  const visitArg = (a: ArgNode): void => {
    if (a.type === 'identifier' && UNAVAILABLE_FUNCS[a.name] && !seen.has(a.name)) {
      seen.add(a.name);
      problems.push(`function "${a.name}" ${UNAVAILABLE_FUNCS[a.name]}`);
    }
    if (a.type === 'pipe') visitPipe(a.pipe);
    if (a.type === 'chain') visitArg(a.node);
  };
  const visitPipe = (p: PipeNode | undefined): void => p?.cmds.forEach((c) => c.args.forEach(visitArg));
  const visit = (n: Node): void => {
    if ('pipe' in n) visitPipe(n.pipe);
    if ('list' in n) n.list.forEach(visit);
    if ('elseList' in n) n.elseList?.forEach(visit);
  };
  for (const tree of tmpl.treeMap().values()) tree.root.forEach(visit);
  return problems;
}
