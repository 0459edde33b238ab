/**
 * The current picture of a stream, for a page that connects late: every definition, the actors (finished
 * ones capped so a long-running agent does not grow without bound), each actor's latest transition, and
 * the most recent events for the timeline.
 */
import { applyContextPatch, type ActorMessage, type DefinitionMessage, type EventMessage, type InspectMessage, type TransitionMessage } from './protocol.ts';

/** How much of the past a late joiner gets. */
export interface PictureLimits {
  /** Finished (done, error, stopped) actors kept; the oldest are forgotten first. */
  maxFinishedActors: number;
  /** Events kept for the timeline. */
  recentEvents: number;
}

/** The picture's state; `apply` every message in stream order. */
export interface Picture {
  apply(msg: InspectMessage): void;
  /** Messages that rebuild the picture: definitions, actors, recent events, then latest transitions. */
  messages(): InspectMessage[];
  /** The ids from the root actor down to `sessionId` (`['a1', 'web']`), if the actor is known. */
  pathOf(sessionId: string): string[] | undefined;
}

/** An empty picture with the given limits. */
export function createPicture(limits: PictureLimits): Picture {
  const definitions = new Map<string, DefinitionMessage>();
  const actors = new Map<string, ActorMessage>();
  const latest = new Map<string, TransitionMessage>();
  const finished: string[] = [];
  let events: EventMessage[] = [];

  const forgetOldest = () => {
    while (finished.length > limits.maxFinishedActors) {
      const sessionId = finished.shift()!;
      actors.delete(sessionId);
      latest.delete(sessionId);
    }
  };

  return {
    apply(msg) {
      switch (msg.kind) {
        case 'definition':
          definitions.set(msg.machineId, msg);
          return;
        case 'actor':
          actors.set(msg.sessionId, msg);
          return;
        case 'event':
          events.push(msg);
          // Trim in chunks so the common push stays O(1).
          if (events.length > limits.recentEvents * 2) events = events.slice(-limits.recentEvents);
          return;
        case 'transition': {
          if (!actors.has(msg.sessionId)) return;
          const prev = latest.get(msg.sessionId);
          // A transition without context means "unchanged" (or a patch to the last one): the picture keeps it whole.
          const context = msg.context ?? (msg.patch ? applyContextPatch(prev?.context, msg.patch) : prev?.context);
          const merged: TransitionMessage = { ...msg, context };
          delete merged.edges;
          delete merged.patch;
          if (merged.context === undefined) delete merged.context;
          latest.set(msg.sessionId, merged);
          if (msg.status !== 'active' && (prev === undefined || prev.status === 'active')) {
            finished.push(msg.sessionId);
            forgetOldest();
          }
          return;
        }
      }
    },
    pathOf(sessionId) {
      const path: string[] = [];
      for (let a = actors.get(sessionId); a; a = a.parentSessionId === undefined ? undefined : actors.get(a.parentSessionId)) {
        path.unshift(a.id);
        if (a.parentSessionId === undefined) return path;
      }
      return undefined;
    },
    messages() {
      return [...definitions.values(), ...actors.values(), ...events.slice(-limits.recentEvents), ...latest.values()];
    },
  };
}
