/**
 * The visualizer page: wires the feed (live socket, served recording or a picked file) into the model and
 * the model into the views. Modes: `?token=…` live; `?token=…&mode=replay` the server's recording;
 * anything else (or a file picked) replays locally. `&select=alloc/task` preselects an actor by id path.
 */
import ELK from 'elkjs/lib/elk.bundled.js';
import type { CommandResultFrame, HelloFrame, InspectorCommandEvent } from '../../src/inspect/protocol.ts';
import { createChartView } from './chart-view.ts';
import { createDetailsView } from './details-view.ts';
import { connectLive } from './live-source.ts';
import { canvasMeasure } from './measure.ts';
import { Model } from './model.ts';
import { createReplayPlayer, parseRecording, type PlayerState } from './replay-player.ts';
import { createTimelineView } from './timeline-view.ts';
import { createTreeView } from './tree-view.ts';

const $ = <T extends HTMLElement = HTMLElement>(id: string) => document.getElementById(id) as T;

const params = new URLSearchParams(location.search);
const token = params.get('token');
let wantPath = params.get('select')?.split('/');

const model = new Model();
let selected: string | undefined;
let hello: HelloFrame | undefined;
let live: ReturnType<typeof connectLive> | undefined;

// elk.bundled.js is CommonJS whose export is the constructor with itself as `.default`; typed, `.default` is the way in.
const chart = createChartView($('chart'), new ELK.default(), canvasMeasure('11px system-ui, -apple-system, "Segoe UI", sans-serif'));
const tree = createTreeView($('tree'), (sid) => select(sid));
const timeline = createTimelineView($('timeline'));
const details = createDetailsView($('details-body'));

function select(sessionId: string): void {
  selected = sessionId;
  wantPath = undefined;
  scheduleRender();
}

// Controls act on allocations and tasks: machine actors at the root or one level below it.
function controllable(): boolean {
  const a = selected ? model.actors.get(selected) : undefined;
  return !!a && !!a.machineId && model.pathOf(a.sessionId).length <= 2 && !!live && !!hello?.controls && a.status === 'active';
}

function renderControls(): void {
  const a = selected ? model.actors.get(selected) : undefined;
  $('selected-name').textContent = a ? model.pathOf(a.sessionId).join(' / ') : '—';
  const enabled = controllable();
  for (const id of ['cmd-kill', 'cmd-restart', 'cmd-signal']) $<HTMLButtonElement>(id).disabled = !enabled;
  const why = !live ? 'commands need a live inspector' : !hello?.controls ? 'the app did not enable commands' : 'select an allocation or a task';
  for (const id of ['cmd-kill', 'cmd-restart', 'cmd-signal']) $(id).title = enabled ? '' : why;
}

let renderPending = false;
function scheduleRender(): void {
  if (renderPending) return;
  renderPending = true;
  requestAnimationFrame(() => {
    renderPending = false;
    render();
  });
}

function render(): void {
  if (wantPath) {
    const want = wantPath.join('/');
    const found = [...model.actors.values()].reverse().find((a) => model.pathOf(a.sessionId).join('/') === want);
    if (found) selected = found.sessionId;
  }
  if ((!selected || !model.actors.has(selected)) && model.roots.length > 0 && !wantPath) selected = model.roots[model.roots.length - 1];
  if (selected && !model.actors.has(selected)) selected = undefined;
  tree.render(model, selected);
  void chart.show(model, selected);
  timeline.render(model, selected);
  details.render(model, selected);
  renderControls();
}

model.subscribe((m) => {
  // Lay machines out as soon as they are known, so selecting one is instant.
  for (const [id, def] of m.definitions) chart.prepare(id, def);
  scheduleRender();
});

// Commands.
let commandSeq = 0;
function sendCommand(event: InspectorCommandEvent): void {
  if (!live || !selected) return;
  const id = `c${++commandSeq}`;
  const status = $('command-status');
  status.dataset.ok = '';
  status.textContent = `${event.type} sent…`;
  if (!live.send({ type: 'command', id, target: selected, event })) {
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

// Chart and timeline options.
$('zoom-in').addEventListener('click', () => chart.zoomBy(1.25));
$('zoom-out').addEventListener('click', () => chart.zoomBy(0.8));
$('zoom-fit').addEventListener('click', () => chart.setZoom('fit'));
$('zoom-1').addEventListener('click', () => chart.setZoom(1));
$<HTMLInputElement>('follow').addEventListener('change', (e) => chart.setFollow((e.target as HTMLInputElement).checked));
$<HTMLInputElement>('only-selected').addEventListener('change', (e) => {
  timeline.setOnlySelected((e.target as HTMLInputElement).checked);
  scheduleRender();
});
window.addEventListener('resize', () => chart.relayout());

// Replay.
function showPlayer(s: PlayerState): void {
  $('position').textContent = `${s.position} / ${s.total}`;
  $('position').dataset.done = String(s.position >= s.total);
  $('play').textContent = s.playing ? 'pause' : 'play';
}
const player = createReplayPlayer(model, showPlayer);
$('play').addEventListener('click', () => (player.state().playing ? player.pause() : player.play()));
$('step').addEventListener('click', () => player.step());
$('rewind').addEventListener('click', () => player.rewind());
$<HTMLSelectElement>('speed').addEventListener('change', (e) => {
  const v = (e.target as HTMLSelectElement).value;
  player.setSpeed(v === 'inf' ? Infinity : Number(v));
});
player.setSpeed(Infinity);

function enterReplay(text: string, source: string): void {
  live?.close();
  live = undefined;
  hello = undefined;
  $('mode').textContent = `replay: ${source}`;
  $('conn').dataset.state = 'none';
  $('conn').textContent = 'offline';
  $('replay-controls').hidden = false;
  const { messages, bad } = parseRecording(text);
  if (bad > 0) $('command-status').textContent = `${bad} unreadable line(s) skipped`;
  player.load(messages);
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
} else if (token && location.protocol.startsWith('http')) {
  $('mode').textContent = 'live';
  const wsUrl = `${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/ws?token=${encodeURIComponent(token)}`;
  live = connectLive(wsUrl, model, {
    onHello: (h) => {
      hello = h;
      scheduleRender();
    },
    onStatus: (s) => {
      $('conn').dataset.state = s;
      $('conn').textContent = s === 'open' ? 'connected' : s;
      scheduleRender();
    },
    onResult,
  });
} else {
  $('mode').textContent = 'replay: pick a recording';
  $('replay-controls').hidden = false;
}
render();
