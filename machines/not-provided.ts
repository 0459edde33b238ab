/** A placeholder for an actor the runtime supplies with `.provide()`; running it fails with a message saying so. */
import { fromCall } from './call-actor.ts';

/** A promise actor that rejects, naming the machine and the actor that was not provided. */
export function notProvided<TOutput, TInput>(machine: string, name: string, hint: string) {
  return fromCall<TOutput, TInput>(async () => {
    throw new Error(`${machine}: the ${name} actor is not provided; use ${hint} or .provide({ actors: { ${name} } })`);
  });
}
