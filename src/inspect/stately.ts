/**
 * The stream in `@statelyai/inspect`'s format, made by that package itself: its `createInspector` converts
 * XState's inspection events (its own `convertXStateEvent`) and hands each to an adapter, here one that
 * passes them on as JSON-safe objects. The package is loaded only when someone asks for this stream
 * (`serveInspector({ stately: true })`, `allocrun run --stately`).
 */
import type { StatelyInspectionEvent } from '@statelyai/inspect';
import type { InspectionEvent } from 'xstate';
import { sanitize } from './sanitize.ts';

export type { StatelyInspectionEvent };

/** Feeds XState inspection events in; receives `@statelyai/inspect` events out (deferred, as its inspector does). */
export type StatelyFeed = (ev: InspectionEvent) => void;

/**
 * A converter from XState inspection events to `@statelyai/inspect` events, delivered to `onEvent` already
 * reduced to JSON (its events hold live snapshots until serialized). Fails with what to install when the
 * package is missing.
 */
export async function createStatelyFeed(onEvent: (ev: StatelyInspectionEvent) => void): Promise<StatelyFeed> {
  let mod: typeof import('@statelyai/inspect');
  try {
    mod = await import('@statelyai/inspect');
  } catch (err) {
    throw new Error(`the Stately stream needs the @statelyai/inspect package (npm install @statelyai/inspect): ${(err as Error).message}`);
  }
  const inspector = mod.createInspector(
    { send: (ev: StatelyInspectionEvent) => onEvent(ev) },
    { autoStart: true, serialize: (ev) => sanitize(ev) as unknown as StatelyInspectionEvent },
  );
  return (ev) => inspector.inspect.next?.(ev);
}
