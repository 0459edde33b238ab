/**
 * Go's time formatting by reference layout (`2006-01-02T15:04:05Z07:00`), as consul-template's
 * `timestamp "layout"` uses it. Times are formatted in UTC.
 */

const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];
const DAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];

/** Go's RFC3339 layout. */
export const RFC3339 = '2006-01-02T15:04:05Z07:00';

// Longest tokens first, as Go's nextStdChunk recognises them.
const TOKENS = ['January', 'Monday', '2006', '-07:00:00', '-0700', '-07:00', 'Z07:00', 'Z0700', '-07', 'Z07', 'Jan', 'Mon', 'MST', '002', '__2', '_2', '01', '02', '03', '04', '05', '06', '15', 'PM', 'pm', '1', '2', '3', '4', '5'];

/** `date` formatted by Go `layout`, in UTC. */
export function formatGoTime(date: Date, layout: string): string {
  const pad = (n: number, w = 2) => String(n).padStart(w, '0');
  const h = date.getUTCHours();
  let out = '';
  let i = 0;
  while (i < layout.length) {
    // Fractional seconds: .000 / .999 (or ,000).
    const frac = /^[.,](0+|9+)(?![0-9])/.exec(layout.slice(i));
    if (frac && /[0-9]$/.test(out)) {
      const digits = frac[1]!.length;
      const nanos = String(date.getUTCMilliseconds() * 1_000_000).padStart(9, '0').slice(0, digits);
      out += frac[1]![0] === '9' ? (/[1-9]/.test(nanos) ? `${frac[0][0]}${nanos.replace(/0+$/, '')}` : '') : `${frac[0][0]}${nanos}`;
      i += frac[0].length;
      continue;
    }
    const tok = TOKENS.find((t) => layout.startsWith(t, i));
    if (!tok) {
      out += layout[i];
      i++;
      continue;
    }
    i += tok.length;
    switch (tok) {
      case 'January': out += MONTHS[date.getUTCMonth()]; break;
      case 'Jan': out += MONTHS[date.getUTCMonth()]!.slice(0, 3); break;
      case 'Monday': out += DAYS[date.getUTCDay()]; break;
      case 'Mon': out += DAYS[date.getUTCDay()]!.slice(0, 3); break;
      case '2006': out += pad(date.getUTCFullYear(), 4); break;
      case '06': out += pad(date.getUTCFullYear() % 100); break;
      case '01': out += pad(date.getUTCMonth() + 1); break;
      case '1': out += String(date.getUTCMonth() + 1); break;
      case '02': out += pad(date.getUTCDate()); break;
      case '2': out += String(date.getUTCDate()); break;
      case '_2': out += String(date.getUTCDate()).padStart(2, ' '); break;
      case '002': case '__2': {
        const day = Math.floor((date.getTime() - Date.UTC(date.getUTCFullYear(), 0, 1)) / 86_400_000) + 1;
        out += tok === '002' ? pad(day, 3) : String(day).padStart(3, ' ');
        break;
      }
      case '15': out += pad(h); break;
      case '03': out += pad(h % 12 === 0 ? 12 : h % 12); break;
      case '3': out += String(h % 12 === 0 ? 12 : h % 12); break;
      case '04': out += pad(date.getUTCMinutes()); break;
      case '4': out += String(date.getUTCMinutes()); break;
      case '05': out += pad(date.getUTCSeconds()); break;
      case '5': out += String(date.getUTCSeconds()); break;
      case 'PM': out += h >= 12 ? 'PM' : 'AM'; break;
      case 'pm': out += h >= 12 ? 'pm' : 'am'; break;
      case 'MST': out += 'UTC'; break;
      case 'Z07:00': case 'Z0700': case 'Z07': out += 'Z'; break;
      case '-07:00:00': out += '+00:00:00'; break;
      case '-0700': out += '+0000'; break;
      case '-07:00': out += '+00:00'; break;
      case '-07': out += '+00'; break;
    }
  }
  return out;
}
