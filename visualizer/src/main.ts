/**
 * The visualizer page: wires the feed (live socket, served recording or a picked file) into the model and
 * the model into the views, rendering at most once per animation frame. Modes: `?token=…` live;
 * `?token=…&mode=replay` the server's recording; anything else (or a file picked) replays locally.
 * `&select=alloc/task` preselects an actor by id path.
 */
import ELK from 'elkjs/lib/elk.bundled.js';
import { PROTOCOL_VERSION, type CommandResultFrame, type HelloFrame, type InspectorCommandEvent } from '../../src/inspect/protocol.ts';
import { createAllocList, type SortKey } from './alloc-list.ts';
import { createChartView } from './chart-view.ts';
import { createDetailsView } from './details-view.ts';
import { connectLive, liveSocketUrl, servedLive, type LiveStatus } from './live-source.ts';
import { canvasMeasure } from './measure.ts';
import { Model, type TimelineEntry } from './model.ts';
import { allocNamesOf, timeText } from './nomad.ts';
import { hashOf, pathOfHash } from './url-state.ts';
import { createReplayPlayer, parseRecording, type PlayerState } from './replay-player.ts';
import { createSequenceView } from './sequence-view.ts';
import { createTimelineView } from './timeline-view.ts';
import type { DivergenceLine } from '../../src/inspect/replay-format.ts';

const $ = <T extends HTMLElement = HTMLElement>(id: string) => document.getElementById(id) as T;

const params = new URLSearchParams(location.search);
const token = params.get('token');

const model = new Model();
let selected: string | undefined;
/** The selection by id path: survives reconnects (new sessionIds) and restarts (a task's new runner). */
let selectedPath: string[] | undefined = pathOfHash(location.hash) ?? params.get('select')?.split('/');
/** A link (`#/alloc/<id>/task/<name>`, `?select=`) names a row to show: scroll it into view once it exists. */
let revealPending = selectedPath !== undefined;
let sort: { key: SortKey; descending: boolean } | undefined;
let hello: HelloFrame | undefined;
let live: ReturnType<typeof connectLive> | undefined;
let liveStatus: LiveStatus | undefined;
let picked: TimelineEntry | undefined;
let past: { seq: number; model: Model } | undefined;
let showInternal = false;
let tab: 'chart' | 'sequence' = 'chart';

/** Measurements the benchmark reads (bench/visualizer.ts): renders, and click → updated-page latencies. */
const probe = {
  renders: 0,
  roots: 0,
  clicks: [] as { path: string; ms: number }[],
  pendingClick: undefined as { path: string; t0: number } | undefined,
  /** Pointer-up on a row → the first frame after the page shows that row selected. */
  pointerUps: [] as { path: string; ms: number }[],
  /** Time-travel picks: ms to rebuild the past model. */
  picks: [] as number[],
  /** Time-travel picks: pick → the first frame after the page shows that moment. */
  pickFrames: [] as number[],
  /** Where render time goes: total and longest ms per part. */
  parts: {} as Record<string, { total: number; max: number }>,
  /** Main-thread tasks over 50 ms (the browser's long tasks), in ms. */
  longTasks: [] as number[],
  /** Feed batches applied: total and longest ms. */
  applyMs: { total: 0, max: 0 },
  /** The longest animation frames (over 100 ms, the latest 50) and the scripts that ran in them, where the browser says. */
  longFrames: [] as { ms: number; blockingMs: number; scripts: { what: string; ms: number }[] }[],
  model,
};
(window as unknown as { __allocrun: typeof probe }).__allocrun = probe;

// elk.bundled.js is CommonJS whose export is the constructor with itself as `.default`; typed, `.default` is the way in.
const chart = createChartView($('chart'), new ELK.default(), canvasMeasure('11px system-ui, -apple-system, "Segoe UI", sans-serif'));
const allocs = createAllocList($('allocs'), { onSelect: (sid) => select(sid), onScroll: () => scheduleRender() });
const timeline = createTimelineView($('timeline'), (e) => pick(e), () => scheduleRender());
/** A checked replay's divergence (`replay --check --open`), marked on the timeline. */
let divergence: DivergenceLine | undefined;
const sequence = createSequenceView($('sequence'), (e) => pick(e));
const details = createDetailsView($('details-body'), (path) =>
  live && hello?.logs ? `logs?${token ? `token=${encodeURIComponent(token)}&` : ''}alloc=${encodeURIComponent(path[0]!)}&task=${encodeURIComponent(path[1] ?? '')}&follow=1` : undefined,
);

/** The model the views show: the past while travelling, else the present. */
function shownModel(): Model {
  if (!picked) return model;
  if (past?.seq !== picked.seq) {
    const t0 = performance.now();
    past = { seq: picked.seq, model: model.at(picked.seq) };
    probe.picks.push(performance.now() - t0);
  }
  return past.model;
}

function select(sessionId: string): void {
  const m = shownModel();
  const path = m.pathOf(sessionId);
  if (path.join('/') !== selectedPath?.join('/')) clearCommandStatus();
  selected = sessionId;
  selectedPath = path;
  probe.pendingClick = { path: selectedPath.join('/'), t0: performance.now() };
  followInUrl();
  scheduleRender();
}

/** The URL names the selection (`#/alloc/<id>/task/<name>`), so a copied link opens there. */
function followInUrl(): void {
  const hash = selectedPath ? hashOf(selectedPath) : '';
  if (hash !== location.hash) history.replaceState(null, '', `${location.pathname}${location.search}${hash}`);
}
window.addEventListener('hashchange', () => {
  const path = pathOfHash(location.hash);
  if (!path || path.join('/') === selectedPath?.join('/')) return;
  clearCommandStatus();
  selectedPath = path;
  selected = undefined;
  revealPending = true;
  scheduleRender();
});

let pendingPick: number | undefined;
function pick(e: TimelineEntry | undefined): void {
  picked = e;
  past = undefined;
  pendingPick = e ? performance.now() : undefined;
  // A replay stops at the picked moment: playing on underneath would move what the banner describes.
  if (e && !live && player.state().playing) player.pause();
  scheduleRender();
}

function canCommand(): string | undefined {
  const m = shownModel();
  const a = selected ? m.actors.get(selected) : undefined;
  if (!live) return 'commands need a live inspector';
  if (!live.isOpen()) return 'disconnected: commands wait for the connection';
  if (!hello?.controls) return 'the app did not enable commands';
  if (picked) return 'travelling in time: go back to live to send commands';
  if (!a || !a.machineId || m.pathOf(a.sessionId).length > 2) return 'select an allocation or a task';
  return undefined;
}

function renderControls(): void {
  const m = shownModel();
  const a = selected ? m.actors.get(selected) : undefined;
  $('selected-name').textContent = a ? m.pathOf(a.sessionId).join(' / ') : '—';
  const why = canCommand();
  for (const id of ['cmd-kill', 'cmd-restart', 'cmd-signal']) {
    $<HTMLButtonElement>(id).disabled = why !== undefined;
    $(id).title = why ?? '';
  }
  $<HTMLInputElement>('follow').checked = chart.following();
}

function renderBanners(): void {
  const stale = $('stale');
  if (live && liveStatus && liveStatus.state !== 'open') {
    stale.hidden = false;
    stale.dataset.state = liveStatus.state;
    if (liveStatus.state === 'closed') {
      const secs = Math.max(0, Math.ceil((liveStatus.retryAt - Date.now()) / 1000));
      stale.textContent = `Disconnected from the inspector since ${new Date(liveStatus.since).toLocaleTimeString(undefined, { hour12: false })}: what you see is stale and commands are off. Reconnecting in ${secs} s (attempt ${liveStatus.attempt})…`;
    } else stale.textContent = `Connecting to the inspector (attempt ${liveStatus.attempt})… what you see may be stale; commands are off.`;
  } else stale.hidden = true;
  const travel = $('travel');
  travel.hidden = !picked;
  if (picked) {
    const n = model.eventNumber(picked.seq);
    const after = model.nextSeq - 1 - picked.seq;
    const total = model.nextSeq - model.resetSeq;
    $('travel-text').textContent = live
      ? `Time travel: every actor as it was at event #${n} (${timeText(picked.at, model.origin)}). Live updates are buffered meanwhile: ${after} arrived since this event; back to live (Esc) shows them.`
      : `Time travel: every actor as it was at event #${n} of ${player.state().total} (${timeText(picked.at, model.origin)}). Replay paused at ${total} (the bar), ${after} event(s) past this one.`;
  }
  const cut = model.historyCut;
  const note = $('page-cut');
  note.hidden = !cut;
  if (cut) {
    const text = `history before ${timeText(cut.at, model.origin)} dropped (${cut.dropped} events)`;
    if (note.textContent !== text) note.textContent = text;
  }
  $('conn').dataset.state = liveStatus?.state ?? 'none';
  $('conn').textContent = !live ? 'offline' : liveStatus?.state === 'open' ? 'connected' : liveStatus?.state === 'closed' ? 'disconnected' : 'connecting';
}

let renderPending = false;
let dataTimer: ReturnType<typeof setTimeout> | undefined;
let lastRender = 0;
let tick: ReturnType<typeof setInterval> | undefined;
/** Renders in the next animation frame: for what the user did (a click, a scroll), which must show at once. */
function scheduleRender(): void {
  if (renderPending) return;
  renderPending = true;
  if (dataTimer) clearTimeout(dataTimer);
  dataTimer = undefined;
  requestAnimationFrame(() => {
    renderPending = false;
    lastRender = performance.now();
    render();
  });
}
// New data alone redraws at most this often: at hundreds of messages a second, drawing every frame would
// keep the page busy without showing anyone more.
const DATA_RENDER_INTERVAL = 250;
/** Renders for new data from the feed: coalesced, at most every DATA_RENDER_INTERVAL ms. */
function scheduleDataRender(): void {
  if (renderPending || dataTimer) return;
  const wait = Math.max(0, lastRender + DATA_RENDER_INTERVAL - performance.now());
  if (wait === 0) return scheduleRender();
  dataTimer = setTimeout(() => {
    dataTimer = undefined;
    scheduleRender();
  }, wait);
}

/** Times `fn` into probe.parts[name]. */
function timed<T>(name: string, fn: () => T): T {
  const t0 = performance.now();
  try {
    return fn();
  } finally {
    const ms = performance.now() - t0;
    const p = (probe.parts[name] ??= { total: 0, max: 0 });
    p.total += ms;
    if (ms > p.max) p.max = ms;
  }
}
try {
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) probe.longTasks.push(e.duration);
  }).observe({ type: 'longtask', buffered: true });
} catch {
  // No long-task timing in this browser: the probe just stays empty.
}
try {
  new PerformanceObserver((list) => {
    for (const e of list.getEntries() as unknown as { duration: number; blockingDuration: number; scripts: { invoker: string; sourceFunctionName: string; duration: number }[] }[]) {
      if (e.duration < 100) continue;
      probe.longFrames.push({ ms: e.duration, blockingMs: e.blockingDuration, scripts: e.scripts.map((x) => ({ what: `${x.invoker} ${x.sourceFunctionName}`, ms: x.duration })) });
      if (probe.longFrames.length > 50) probe.longFrames.shift();
    }
  }).observe({ type: 'long-animation-frame', buffered: true });
} catch {
  // No long-animation-frame timing in this browser.
}

function render(): void {
  probe.renders++;
  const m = timed('travel', shownModel);
  const changed = model.takeChanged();
  let reveal: string | undefined;
  if (selectedPath) {
    const found = m.findByPath(selectedPath);
    if (found) {
      selected = found.sessionId;
      if (revealPending) {
        // Opened from a link: open its allocation and scroll the row into view.
        let root = found;
        while (root.parentSessionId && m.actors.has(root.parentSessionId)) root = m.actors.get(root.parentSessionId)!;
        if (root !== found) allocs.expand(root.sessionId);
        reveal = found.sessionId;
      }
    }
  }
  if ((!selected || !m.actors.has(selected)) && !selectedPath && m.roots.length > 0) selected = m.roots[0];
  if (selected && !m.actors.has(selected)) selected = undefined;
  // The timeline first: following its tail scrolls, and a scroll before any other DOM write needs no fresh layout.
  const onlySelected = $<HTMLInputElement>('only-selected').checked;
  timed('timeline', () => timeline.render(model, { showInternal, query: $<HTMLInputElement>('timeline-filter').value, within: onlySelected ? selected : undefined, divergence }, picked?.seq));
  timed('allocs', () => allocs.render(m, selected, { showInternal, query: $<HTMLInputElement>('alloc-filter').value, sort }, picked ? new Set(['*']) : changed));
  // Scrolling moves the rows: the scroll event draws them again in the next frame.
  if (reveal && allocs.reveal(reveal)) {
    revealPending = false;
    followInUrl();
  }
  timed('chart', () => (tab === 'chart' ? void chart.show(m, selected) : sequence.render(m, selected, showInternal, picked?.seq)));
  timed('details', () => details.render(m, selected, picked));
  timed('controls', () => {
    renderControls();
    renderBanners();
  });
  const pending = probe.pendingClick;
  if (pending && selected && m.pathOf(selected).join('/') === pending.path) {
    probe.clicks.push({ path: pending.path, ms: performance.now() - pending.t0 });
    probe.pendingClick = undefined;
  }
  const t0 = pendingPick;
  if (t0 !== undefined && picked) {
    pendingPick = undefined;
    requestAnimationFrame(() => probe.pickFrames.push(performance.now() - t0));
  }
  const up = pendingUp;
  if (up && selectedPath?.join('/') === up.path) {
    pendingUp = undefined;
    // The frame after this render is the one that shows it.
    requestAnimationFrame(() => probe.pointerUps.push({ path: up.path, ms: performance.now() - up.t0 }));
  }
  document.body.dataset.applied = String(model.nextSeq);
  probe.roots = model.roots.length;
}

// The feed's cost, for the benchmark: every batch goes through apply.
{
  const apply = model.apply.bind(model);
  model.apply = (messages) => {
    const t0 = performance.now();
    apply(messages);
    const ms = performance.now() - t0;
    probe.applyMs.total += ms;
    if (ms > probe.applyMs.max) probe.applyMs.max = ms;
  };
}
model.subscribe((m) => {
  // Lay machines out as soon as they are known, so selecting one is instant.
  for (const [id, def] of m.definitions) chart.prepare(id, def);
  scheduleDataRender();
});

let pendingUp: { path: string; t0: number } | undefined;
$('allocs').addEventListener('pointerup', (e) => {
  const row = (e.target as HTMLElement).closest<HTMLElement>('[data-path]');
  if (row?.dataset.path && !(e.target as HTMLElement).closest('.twisty')) {
    pendingUp = { path: row.dataset.path, t0: performance.now() };
    // The row was selected on pointer-down and is often drawn so before pointer-up: the next frame shows it.
    // Without asking for one, the probe waited for the next data render (up to 250 ms) and counted that.
    scheduleRender();
  }
});

// Commands.
let commandSeq = 0;
/** The command awaiting its answer: its answer is shown only while the same actor is selected. */
let awaiting: { id: string; path: string; done: string } | undefined;
function clearCommandStatus(): void {
  awaiting = undefined;
  const status = $('command-status');
  status.dataset.ok = '';
  status.textContent = '';
}
/** What a command does, in Nomad's words (`nomad alloc stop`, `alloc restart`, `alloc signal`). */
function commandText(event: InspectorCommandEvent, path: string[]): { sent: string; done: string } {
  const m = shownModel();
  const alloc = m.findByPath(path.slice(0, 1));
  const what = path.length > 1 ? `task ${path[1]}` : `allocation ${alloc ? allocNamesOf(alloc).shortId : path[0]}`;
  if (event.type === 'KILL') return path.length > 1 ? { sent: `killing ${what}…`, done: `${what} killed` } : { sent: `stopping ${what}…`, done: `${what} stopping` };
  if (event.type === 'RESTART') return { sent: `restarting ${what}…`, done: `${what} restarting` };
  return { sent: `signalling ${what}…`, done: `${what} signalled with ${event.signal}` };
}
function sendCommand(event: InspectorCommandEvent): void {
  if (!live || !selected || canCommand()) return;
  const id = `c${++commandSeq}`;
  const path = selectedPath ?? shownModel().pathOf(selected);
  const text = commandText(event, path);
  const status = $('command-status');
  status.dataset.ok = '';
  status.textContent = text.sent;
  awaiting = { id, path: path.join('/'), done: text.done };
  if (!live.send({ type: 'command', id, target: path, event })) {
    awaiting = undefined;
    status.dataset.ok = 'false';
    status.textContent = 'not connected';
  }
}
function onResult(r: CommandResultFrame): void {
  // An answer to a command sent for another selection (or cleared) is not this selection's.
  if (!awaiting || awaiting.id !== r.id) return;
  const status = $('command-status');
  status.dataset.ok = String(r.ok);
  status.textContent = r.ok ? awaiting.done : `refused: ${r.message ?? 'unknown reason'}`;
  awaiting = undefined;
}
$('cmd-kill').addEventListener('click', () => sendCommand({ type: 'KILL' }));
$('cmd-restart').addEventListener('click', () => sendCommand({ type: 'RESTART' }));
$('cmd-signal').addEventListener('click', () => sendCommand({ type: 'SIGNAL', signal: 'SIGHUP' }));

// Toolbar options.
$('zoom-in').addEventListener('click', () => chart.zoomBy(1.25));
$('zoom-out').addEventListener('click', () => chart.zoomBy(0.8));
$('zoom-fit').addEventListener('click', () => chart.setZoom('fit'));
$('zoom-1').addEventListener('click', () => chart.setZoom(1));
$<HTMLInputElement>('follow').addEventListener('change', (e) => chart.setFollow((e.target as HTMLInputElement).checked));
$<HTMLInputElement>('show-internal').addEventListener('change', (e) => {
  showInternal = (e.target as HTMLInputElement).checked;
  scheduleRender();
});
for (const id of ['only-selected', 'alloc-filter', 'timeline-filter']) $(id).addEventListener('input', () => scheduleRender());
// Sorting: a header clicked once sorts ascending, again descending, a third time back to arrival order.
for (const b of Array.from(document.querySelectorAll<HTMLButtonElement>('#alloc-sort button[data-sort]'))) {
  b.addEventListener('click', () => {
    const key = b.dataset.sort as SortKey;
    sort = sort?.key !== key ? { key, descending: false } : !sort.descending ? { key, descending: true } : undefined;
    for (const o of Array.from(document.querySelectorAll<HTMLButtonElement>('#alloc-sort button[data-sort]'))) {
      const on = sort?.key === o.dataset.sort;
      o.setAttribute('aria-sort', on ? (sort!.descending ? 'descending' : 'ascending') : 'none');
      o.dataset.dir = on ? (sort!.descending ? '▼' : '▲') : '';
    }
    scheduleRender();
  });
}
// Keyboard: `/` finds, Esc goes back to live; the allocation list has its own keys when focused.
document.addEventListener('keydown', (e) => {
  const typing = e.target instanceof HTMLInputElement || e.target instanceof HTMLSelectElement || e.target instanceof HTMLTextAreaElement;
  if (e.key === '/' && !typing && !e.ctrlKey && !e.metaKey && !e.altKey) {
    e.preventDefault();
    $<HTMLInputElement>('alloc-filter').focus();
  } else if (e.key === 'Escape' && picked) {
    e.preventDefault();
    pick(undefined);
  }
});
$('back-to-live').addEventListener('click', () => pick(undefined));
for (const t of ['chart', 'sequence'] as const) {
  $(`tab-${t}`).addEventListener('click', () => {
    tab = t;
    $('chart').hidden = t !== 'chart';
    $('sequence').hidden = t !== 'sequence';
    $('tab-chart').classList.toggle('on', t === 'chart');
    $('tab-sequence').classList.toggle('on', t === 'sequence');
    scheduleRender();
  });
}
window.addEventListener('resize', () => {
  chart.relayout();
  scheduleRender();
});

// Replay.
function showPlayer(s: PlayerState): void {
  $('position').textContent = `${s.position} / ${s.total}`;
  $('position').dataset.done = String(s.position >= s.total);
  $('play').textContent = s.playing ? 'pause' : 'play';
  const seek = $<HTMLInputElement>('seek');
  seek.max = String(s.total);
  seek.value = String(s.position);
  $('replay-hint').textContent =
    s.total === 0 ? 'pick a recording (allocrun run --record FILE)'
    : s.playing ? 'playing: pause, drag the bar, or click an event to stop at a moment'
    : s.position >= s.total ? 'at the end: drag the bar or press play to watch again'
    : 'paused: press play, step, or drag the bar';
}
const player = createReplayPlayer(model, showPlayer);
$('play').addEventListener('click', () => (player.state().playing ? player.pause() : player.play()));
$('step').addEventListener('click', () => player.step());
$('rewind').addEventListener('click', () => player.rewind());
$<HTMLInputElement>('seek').addEventListener('input', (e) => {
  picked = undefined;
  player.seek(Number((e.target as HTMLInputElement).value));
});
$<HTMLSelectElement>('speed').addEventListener('change', (e) => {
  const v = (e.target as HTMLSelectElement).value;
  player.setSpeed(v === 'inf' ? Infinity : Number(v));
});

function enterReplay(text: string, source: string): void {
  live?.close();
  live = undefined;
  hello = undefined;
  liveStatus = undefined;
  $('mode').textContent = `replay: ${source}`;
  $('replay-controls').hidden = false;
  const { messages, bad, error, divergence: diverged } = parseRecording(text);
  divergence = diverged;
  player.load(messages);
  if (error) {
    $('command-status').dataset.ok = 'false';
    $('command-status').textContent = `cannot replay: ${error}`;
    scheduleRender();
    return;
  }
  if (bad > 0) {
    $('command-status').dataset.ok = 'false';
    $('command-status').textContent = `${bad} unreadable line(s) skipped`;
  }
  if (diverged) {
    $('command-status').dataset.ok = 'false';
    $('command-status').textContent = `replay --check: ${diverged.actor} diverged at step ${diverged.step}: ${diverged.message}`;
  }
  // A replay starts playing at the recorded pace ×4: opening on "0 / N" with nothing moving reads as broken.
  $<HTMLSelectElement>('speed').value = '4';
  player.setSpeed(4);
  player.play();
  scheduleRender();
}
$<HTMLInputElement>('file').addEventListener('change', async (e) => {
  const file = (e.target as HTMLInputElement).files?.[0];
  if (file) enterReplay(await file.text(), file.name);
});

// Start.
if (token && params.get('mode') === 'replay') {
  $('mode').textContent = 'replay';
  fetch(`recording.jsonl?token=${encodeURIComponent(token)}`)
    .then(async (res) => {
      if (!res.ok) throw new Error(`${res.status} ${await res.text()}`);
      enterReplay(await res.text(), 'recording');
    })
    .catch((err: Error) => {
      $('command-status').dataset.ok = 'false';
      $('command-status').textContent = `cannot load the recording: ${err.message}`;
    });
} else if ((token || servedLive(document)) && location.protocol.startsWith('http')) {
  $('mode').textContent = 'live';
  live = connectLive(liveSocketUrl(location, token), model, {
    onHistory: (h) => {
      // The server kept less than its stream said: the timeline starts later than the run did.
      $('history-cut').hidden = !h.cut;
    },
    onHello: (h) => {
      hello = h;
      if (h.version !== PROTOCOL_VERSION) {
        // connectLive has stopped: a page built for another protocol would misread the stream.
        $('command-status').dataset.ok = 'false';
        $('command-status').textContent = `the inspector speaks protocol version ${h.version}, this page version ${PROTOCOL_VERSION}: reload the page`;
      }
      scheduleRender();
    },
    onStatus: (s) => {
      liveStatus = s;
      // The banner counts down to the next attempt.
      if (s.state === 'closed') tick ??= setInterval(scheduleRender, 1000);
      else if (tick) {
        clearInterval(tick);
        tick = undefined;
      }
      scheduleRender();
    },
    onResult,
  });
} else {
  $('mode').textContent = 'replay: pick a recording';
  $('replay-controls').hidden = false;
  showPlayer(player.state());
}
render();
