/**
 * The visualizer page: wires the feed (live socket, served recording or a picked file) into the model and
 * the model into the views, rendering at most once per animation frame. Modes: `?token=…` live;
 * `?token=…&mode=replay` the server's recording; anything else (or a file picked) replays locally.
 * `&select=alloc/task` preselects an actor by id path.
 */
import ELK from 'elkjs/lib/elk.bundled.js';
import { PROTOCOL_VERSION, type CommandResultFrame, type HelloFrame, type InspectorCommandEvent } from '../../src/inspect/protocol.ts';
import { createAllocList } from './alloc-list.ts';
import { createChartView } from './chart-view.ts';
import { createDetailsView } from './details-view.ts';
import { connectLive, liveSocketUrl, servedLive, type LiveStatus } from './live-source.ts';
import { canvasMeasure } from './measure.ts';
import { Model, type TimelineEntry } from './model.ts';
import { timeText } from './nomad.ts';
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
let selectedPath: string[] | undefined = params.get('select')?.split('/');
let hello: HelloFrame | undefined;
let live: ReturnType<typeof connectLive> | undefined;
let liveStatus: LiveStatus | undefined;
let picked: TimelineEntry | undefined;
let past: { seq: number; model: Model } | undefined;
let showInternal = false;
let tab: 'chart' | 'sequence' = 'chart';

/** Measurements the benchmark reads (bench/visualizer.ts): renders, and click → updated-page latencies. */
const probe = { renders: 0, roots: 0, clicks: [] as { path: string; ms: number }[], pendingClick: undefined as { path: string; t0: number } | undefined };
(window as unknown as { __allocrun: typeof probe }).__allocrun = probe;

// elk.bundled.js is CommonJS whose export is the constructor with itself as `.default`; typed, `.default` is the way in.
const chart = createChartView($('chart'), new ELK.default(), canvasMeasure('11px system-ui, -apple-system, "Segoe UI", sans-serif'));
const allocs = createAllocList($('allocs'), (sid) => select(sid), () => scheduleRender());
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
  if (past?.seq !== picked.seq) past = { seq: picked.seq, model: model.at(picked.seq) };
  return past.model;
}

function select(sessionId: string): void {
  const m = shownModel();
  selected = sessionId;
  selectedPath = m.pathOf(sessionId);
  probe.pendingClick = { path: selectedPath.join('/'), t0: performance.now() };
  scheduleRender();
}

function pick(e: TimelineEntry | undefined): void {
  picked = e;
  past = undefined;
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
    $('travel-text').textContent = `Time travel: every actor as it was at event #${picked.seq} (${timeText(picked.at, model.origin)}). The live feed keeps arriving underneath.`;
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

function render(): void {
  probe.renders++;
  const m = shownModel();
  const changed = model.takeChanged();
  if (selectedPath) {
    const found = m.findByPath(selectedPath);
    if (found) {
      selected = found.sessionId;
      let root = found;
      while (root.parentSessionId && m.actors.has(root.parentSessionId)) root = m.actors.get(root.parentSessionId)!;
      if (root !== found) allocs.expand(root.sessionId);
    }
  }
  if ((!selected || !m.actors.has(selected)) && !selectedPath && m.roots.length > 0) selected = m.roots[0];
  if (selected && !m.actors.has(selected)) selected = undefined;
  // The timeline first: following its tail scrolls, and a scroll before any other DOM write needs no fresh layout.
  const onlySelected = $<HTMLInputElement>('only-selected').checked;
  timeline.render(model, { showInternal, query: $<HTMLInputElement>('timeline-filter').value, within: onlySelected ? selected : undefined, divergence }, picked?.seq);
  allocs.render(m, selected, { showInternal, query: $<HTMLInputElement>('alloc-filter').value }, picked ? new Set(['*']) : changed);
  if (tab === 'chart') void chart.show(m, selected);
  else sequence.render(m, selected, showInternal, picked?.seq);
  details.render(m, selected, picked);
  renderControls();
  renderBanners();
  const pending = probe.pendingClick;
  if (pending && selected && m.pathOf(selected).join('/') === pending.path) {
    probe.clicks.push({ path: pending.path, ms: performance.now() - pending.t0 });
    probe.pendingClick = undefined;
  }
  document.body.dataset.applied = String(model.nextSeq);
  probe.roots = model.roots.length;
}

model.subscribe((m) => {
  // Lay machines out as soon as they are known, so selecting one is instant.
  for (const [id, def] of m.definitions) chart.prepare(id, def);
  scheduleDataRender();
});

// Commands.
let commandSeq = 0;
function sendCommand(event: InspectorCommandEvent): void {
  if (!live || !selected || canCommand()) return;
  const id = `c${++commandSeq}`;
  const status = $('command-status');
  status.dataset.ok = '';
  status.textContent = `${event.type} sent…`;
  if (!live.send({ type: 'command', id, target: selectedPath ?? selected, event })) {
    status.dataset.ok = 'false';
    status.textContent = 'not connected';
  }
}
function onResult(r: CommandResultFrame): void {
  const status = $('command-status');
  status.dataset.ok = String(r.ok);
  status.textContent = r.ok ? `done (${r.id})` : `refused: ${r.message ?? 'unknown reason'}`;
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
