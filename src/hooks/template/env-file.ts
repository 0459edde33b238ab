/**
 * A rendered `env = true` template read as Nomad reads it (go-envparse): `KEY=value` lines, blank lines and
 * `#` comments skipped, an optional `export `, values in double quotes (with `\n`, `\"`, `\\` escapes) or
 * single quotes (raw), unquoted values trimmed.
 */

/** The variables of an env file; throws with the line number of the first bad line. */
export function parseEnvFile(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  text.split(/\r?\n/).forEach((raw, i) => {
    let line = raw.trim();
    if (line === '' || line.startsWith('#')) return;
    if (line.startsWith('export ')) line = line.slice(7).trimStart();
    const eq = line.indexOf('=');
    if (eq <= 0) throw new Error(`line ${i + 1}: expected KEY=value, got ${JSON.stringify(raw.slice(0, 80))}`);
    const key = line.slice(0, eq).trim();
    if (!/^[A-Za-z_][A-Za-z0-9_.-]*$/.test(key)) throw new Error(`line ${i + 1}: ${JSON.stringify(key)} is not a variable name`);
    let value = line.slice(eq + 1).trim();
    if (value.startsWith('"')) {
      if (!value.endsWith('"') || value.length < 2) throw new Error(`line ${i + 1}: unterminated double-quoted value`);
      value = value.slice(1, -1).replace(/\\(.)/g, (_m, c: string) => ({ n: '\n', r: '\r', t: '\t' })[c] ?? c);
    } else if (value.startsWith("'")) {
      if (!value.endsWith("'") || value.length < 2) throw new Error(`line ${i + 1}: unterminated single-quoted value`);
      value = value.slice(1, -1);
    } else {
      value = value.replace(/\s+#.*$/, '');
    }
    out[key] = value;
  });
  return out;
}
