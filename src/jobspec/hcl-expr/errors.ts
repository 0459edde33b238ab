/** A problem in an HCL expression: what was wrong, and where (an offset in the text that was read). */
export class ExprError extends Error {
  constructor(
    message: string,
    /** Offset in the expression's text. */
    readonly at: number,
  ) {
    super(message);
    this.name = 'ExprError';
  }
}

/** A reference whose own problem is already reported (an unset variable, a failed local): stop quietly. */
export class AlreadyReported extends Error {
  constructor() {
    super('already reported');
    this.name = 'AlreadyReported';
  }
}
