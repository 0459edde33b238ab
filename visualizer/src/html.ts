/** Escaping for the markup the views build as strings. */

/** Escapes text for HTML/SVG content and attribute values. */
export function esc(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
