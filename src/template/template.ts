/**
 * A Go text/template set: parse text (with its `define`s) under a name, with delimiters and functions,
 * then execute it with data and a missing-key option. The public face of src/template's engine.
 */
import { BUILTINS } from './builtins.ts';
import { execute, type MissingKey } from './exec.ts';
import type { FuncMap } from './funcs.ts';
import type { Tree } from './nodes.ts';
import { isEmpty, parseTemplate } from './parser.ts';

/** How to parse and run a template. */
export interface TemplateOptions {
  /** Extra functions beside Go's builtins (a function of the same name replaces the builtin). */
  funcs?: FuncMap;
  leftDelim?: string;
  rightDelim?: string;
  /** Go's `missingkey` option; consul-template's `error_on_missing_key` sets `error`. */
  missingKey?: MissingKey;
}

/** A parsed template and the templates it defines. */
export class Template {
  private readonly funcs: FuncMap;
  private readonly trees = new Map<string, Tree>();

  constructor(
    readonly name: string,
    private readonly opts: TemplateOptions = {},
  ) {
    this.funcs = { ...BUILTINS, ...opts.funcs };
  }

  /** Parses `text` into this set (as `name`, plus its `define`s); throws TemplateParseError. */
  parse(text: string): this {
    const parsed = parseTemplate(text, {
      name: this.name,
      leftDelim: this.opts.leftDelim,
      rightDelim: this.opts.rightDelim,
      hasFunction: (fn) => Object.prototype.hasOwnProperty.call(this.funcs, fn),
    });
    // Go's AddParseTree: a later parse replaces a template, except with an empty body (so a base's blocks survive).
    for (const [name, tree] of parsed) {
      const old = this.trees.get(name);
      if (old && isEmpty(tree.root) && !isEmpty(old.root)) continue;
      this.trees.set(name, tree);
    }
    return this;
  }

  /** The names of the templates in the set. */
  templates(): string[] {
    return [...this.trees.keys()];
  }

  /** The parse trees, for checks that walk them (which functions a template calls). */
  treeMap(): ReadonlyMap<string, Tree> {
    return this.trees;
  }

  /** Runs the template (or the named one of the set) with `data` as dot; throws TemplateExecError. */
  execute(data?: unknown, name = this.name): string {
    return execute(this.trees, name, this.funcs, data, this.opts.missingKey ?? 'default');
  }
}

/** Parses and runs one template text. */
export function renderTemplate(text: string, data?: unknown, opts: TemplateOptions & { name?: string } = {}): string {
  return new Template(opts.name ?? 'template', opts).parse(text).execute(data);
}
