/** Encoding functions of Nomad's jobspec2 table: JSON, YAML, base64, URL and CSV. */
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml';
import { isObject, sortedKeys, type Value } from '../values.ts';
import { jsonEncode } from './json.ts';
import { fn, FunctionError, type HclFunction } from './types.ts';

function decodeUtf8(bytes: Buffer, what: string): string {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw new FunctionError(`${what} is not valid UTF-8`);
  }
}

/** Sorted keys everywhere, as cty's objects are. */
function sorted(v: Value): Value {
  if (Array.isArray(v)) return v.map(sorted);
  if (isObject(v)) return Object.fromEntries(sortedKeys(v).map((k) => [k, sorted(v[k])]));
  return v;
}

/** RFC 4180 CSV: the first row names the columns; every row becomes a map of strings. */
function csvDecode(text: string): Record<string, string>[] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  let i = 0;
  const endField = (): void => {
    row.push(field);
    field = '';
  };
  while (i < text.length) {
    const c = text[i]!;
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') (field += '"'), (i += 2);
      else if (c === '"') (quoted = false), i++;
      else (field += c), i++;
    } else if (c === '"' && field === '') (quoted = true), i++;
    else if (c === ',') endField(), i++;
    else if (c === '\n' || c === '\r') {
      endField();
      rows.push(row);
      row = [];
      i += c === '\r' && text[i + 1] === '\n' ? 2 : 1;
    } else (field += c), i++;
  }
  if (quoted) throw new FunctionError('the CSV text ends inside a quoted field');
  if (field !== '' || row.length > 0) endField(), rows.push(row);
  const [header, ...body] = rows;
  if (!header) throw new FunctionError('missing header line');
  return body.map((r, n) => {
    if (r.length !== header.length) throw new FunctionError(`line ${n + 2}: wrong number of fields (${r.length}, the header has ${header.length})`);
    return Object.fromEntries(header.map((h, k) => [h, r[k]!]));
  });
}

export const ENCODING_FUNCTIONS: Record<string, HclFunction> = {
  jsonencode: fn(['val:any'], ([v]) => jsonEncode(v)),
  jsondecode: fn(['str:string'], ([s]) => {
    try {
      return sorted(JSON.parse(s as string));
    } catch (err) {
      throw new FunctionError(`the text is not valid JSON: ${(err as Error).message}`);
    }
  }),
  yamlencode: fn(['value:any'], ([v]) => stringifyYaml(sorted(v), { lineWidth: 0 })),
  yamldecode: fn(['src:string'], ([s]) => {
    try {
      return sorted(parseYaml(s as string) ?? null);
    } catch (err) {
      throw new FunctionError(`the text is not valid YAML: ${(err as Error).message.split('\n')[0]}`);
    }
  }),
  base64encode: fn(['str:string'], ([s]) => Buffer.from(s as string, 'utf8').toString('base64')),
  base64decode: fn(['str:string'], ([s]) => {
    if (!/^[A-Za-z0-9+/]*={0,2}$/.test(s as string) || (s as string).length % 4 !== 0) throw new FunctionError('failed to decode base64 data: the text is not base64');
    return decodeUtf8(Buffer.from(s as string, 'base64'), 'the decoded base64 data');
  }),
  // Go's url.QueryEscape: spaces become +, and only letters, digits and -_.~ stay as they are.
  urlencode: fn(['str:string'], ([s]) => encodeURIComponent(s as string).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`).replace(/%20/g, '+')),
  csvdecode: fn(['str:string'], ([s]) => csvDecode(s as string)),
};
