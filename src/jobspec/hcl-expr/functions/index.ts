/** Nomad's jobspec2 function table (jobspec2/functions.go): every name it registers, and no other. */
import { CIDR_FUNCTIONS } from './cidr.ts';
import { COLLECTION_FUNCTIONS } from './collections.ts';
import { CRYPTO_FUNCTIONS } from './crypto.ts';
import { DATE_FUNCTIONS } from './dates.ts';
import { ENCODING_FUNCTIONS } from './encoding.ts';
import { FILE_FUNCTIONS } from './files.ts';
import { NUMERIC_FUNCTIONS } from './numeric.ts';
import { STRING_FUNCTIONS } from './strings.ts';
import type { HclFunction } from './types.ts';

export type { FunctionContext, HclFunction, Param, ParamType } from './types.ts';
export { FunctionError } from './types.ts';

/** The functions callers see; `try`, `can` and `convert` take expressions and live in call.ts. */
export const FUNCTIONS: Readonly<Record<string, HclFunction>> = {
  ...STRING_FUNCTIONS,
  ...COLLECTION_FUNCTIONS,
  ...NUMERIC_FUNCTIONS,
  ...ENCODING_FUNCTIONS,
  ...CRYPTO_FUNCTIONS,
  ...DATE_FUNCTIONS,
  ...CIDR_FUNCTIONS,
  ...FILE_FUNCTIONS,
};

/** Every name a job file can call, for listings and for the check that the table matches Nomad's. */
export const FUNCTION_NAMES: readonly string[] = [...Object.keys(FUNCTIONS), 'try', 'can', 'convert'].sort();
