/**
 * The agent's UI (issue 29): the visualizer's feed the agent's runners report to, served at /ui on the
 * API's addresses (src/api/routes/ui.ts). It is on without a flag, as Nomad's UI is on its agent; a page
 * that is not built leaves /ui answering 503 with the command that builds it, and the agent runs on.
 */
import type { AgentUi } from '../api/routes/ui.ts';
import { allocRunnerControl, allocRunnerLogs, type ControllableAllocRunner } from '../inspect/control.ts';
import { createInspectorFeed } from '../inspect/feed.ts';
import { loadPageFiles } from '../inspect/page-files.ts';

/** The UI for runners found by `lookup` (by alloc id): commands and logs go to them. */
export async function openAgentUi(lookup: (allocId: string) => ControllableAllocRunner | undefined, pageDir?: string): Promise<AgentUi> {
  const page = await loadPageFiles(pageDir).catch((err: Error) => ({ missing: `the agent's UI is not available: ${err.message}` }));
  return { feed: createInspectorFeed({ control: allocRunnerControl(lookup), logs: allocRunnerLogs(lookup) }), page };
}

/** Where the UI is, in words for the operator: the URL (no token in it) and how to sign in. */
export function uiNote(api: { socketPath: string; url?: string; tokenFrom?: string }): string {
  if (api.url) return `UI at ${api.url}/ui/ (sign in with an ACL token: open ${api.url}/ui/?token=TOKEN once; the agent's own token: ${api.tokenFrom ?? 'its token file'})`;
  return `UI at /ui/ on ${api.socketPath} (give --http 127.0.0.1:4646 to open it in a browser)`;
}
