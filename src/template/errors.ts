/**
 * The errors of Go's text/template, worded as Go words them (`template: name:3: unexpected "}" in operand`,
 * `template: name:1:2: executing "name" at <.X>: map has no entry for key "X"`) so a consul-template user
 * recognises them.
 */

/** A template that does not parse: names the template, the line and what is wrong. */
export class TemplateParseError extends Error {
  readonly code = 'ErrTemplateParse';
  constructor(
    readonly templateName: string,
    readonly line: number,
    readonly detail: string,
  ) {
    super(`template: ${templateName}:${line}: ${detail}`);
    this.name = 'TemplateParseError';
  }
}

/** A template that parsed but failed while executing: names the template, where, and the action. */
export class TemplateExecError extends Error {
  readonly code = 'ErrTemplateExec';
  constructor(
    readonly templateName: string,
    readonly detail: string,
    where?: { line: number; col: number; action: string },
  ) {
    super(where ? `template: ${templateName}:${where.line}:${where.col}: executing "${templateName}" at <${where.action}>: ${detail}` : `template: ${templateName}: ${detail}`);
    this.name = 'TemplateExecError';
  }
}
