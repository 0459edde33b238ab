/** Short names for XState's internal event types, so edges and the timeline stay readable. */

/** `xstate.done.actor.driver:wait` → `done driver:wait`, `''` → `always`, `xstate.after.15000.x` → `after 15000ms`. */
export function eventLabel(type: string): string {
  if (type === '') return 'always';
  let m = /^xstate\.(done|error)\.actor\.(.*)$/.exec(type);
  if (m) return `${m[1]} ${m[2]}`;
  m = /^xstate\.done\.state\.(.*)$/.exec(type);
  if (m) return `done ${m[1]!.split('.').pop()}`;
  m = /^xstate\.after\.([^.]+)\./.exec(type);
  if (m) return /^\d+$/.test(m[1]!) ? `after ${m[1]}ms` : `after ${m[1]}`;
  m = /^xstate\.snapshot\.(.*)$/.exec(type);
  if (m) return `snapshot ${m[1]}`;
  if (type === 'xstate.init') return 'init';
  if (type === 'xstate.stop') return 'stop';
  return type;
}
