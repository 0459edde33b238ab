/** The offset where the last `n` lines of `text` begin (a final newline does not start an empty line). */
export function startOfLastLines(text: Buffer, n: number): number {
  if (n === 0) return text.length;
  const end = text.length > 0 && text[text.length - 1] === 0x0a ? text.length - 1 : text.length;
  let count = 0;
  for (let i = end - 1; i >= 0; i--) if (text[i] === 0x0a && ++count === n) return i + 1;
  return 0;
}
