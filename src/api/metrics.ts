/**
 * The agent's metrics, kept with prom-client and answered as Nomad's `GET /v1/metrics` answers: its JSON
 * summary (`Gauges`, `Counters`, `Samples`) by default, Prometheus text with `?format=prometheus`. Names
 * follow Nomad's where Nomad has one (`nomad.client.allocations.running`); the agent process's own CPU and
 * memory are prom-client's default process metrics.
 */
import { collectDefaultMetrics, Gauge, Registry, Summary, type MetricObjectWithValues, type MetricValue } from 'prom-client';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AgentStore } from '../state/agent-store.ts';
import type { JobRegistry } from './job-registry.ts';
import type { Json } from './job-json.ts';

/** Latency summaries keep the last ten minutes (Nomad's in-memory sink keeps about as much). */
const SUMMARY = { percentiles: [0, 0.5, 0.9, 0.99, 1], maxAgeSeconds: 600, ageBuckets: 5 };

/** The metrics of one served agent. */
export class AgentMetrics {
  readonly registry = new Registry();
  readonly httpLatency = new Summary({ name: 'nomad_http_request_duration_seconds', help: 'API request latency, by method, route and status', labelNames: ['method', 'route', 'status'], registers: [this.registry], ...SUMMARY });
  readonly commitLatency = new Summary({ name: 'allocrun_store_commit_duration_seconds', help: "Latency of the agent store's commits", registers: [this.registry], ...SUMMARY });

  constructor(registry: JobRegistry) {
    collectDefaultMetrics({ register: this.registry });
    const byStatus = (test: (s: string) => boolean) => () => registry.listAllocs().filter((a) => test(a.lastState.clientStatus)).length;
    const allocGauge = (name: string, help: string, count: () => number) =>
      new Gauge({ name, help, registers: [this.registry], collect() { this.set(count()); } });
    allocGauge('nomad_client_allocations_pending', 'Allocations whose tasks have not all started', byStatus((s) => s === 'pending'));
    allocGauge('nomad_client_allocations_running', 'Allocations running', byStatus((s) => s === 'running'));
    allocGauge('nomad_client_allocations_terminal', 'Allocations complete or failed', byStatus((s) => s === 'complete' || s === 'failed'));
    allocGauge('nomad_client_allocations_blocked', 'Allocations waiting on a previous one (none on one node)', () => 0);
    allocGauge('nomad_client_allocations_migrating', 'Allocations migrating their data (none on one node)', () => 0);
    new Gauge({
      name: 'nomad_client_allocs_restarts',
      help: 'Restarts of each task of each allocation',
      labelNames: ['job', 'task_group', 'task', 'alloc_id', 'namespace'],
      registers: [this.registry],
      collect() {
        this.reset();
        for (const a of registry.listAllocs()) {
          for (const [task, ts] of Object.entries(a.lastState.taskStates)) this.set({ job: a.jobId, task_group: a.group, task, alloc_id: a.id, namespace: a.namespace }, ts.restarts);
        }
      },
    });
  }

  /** Times one answered request by its route pattern (not its path: IDs would make every series new). */
  observeRequest(req: FastifyRequest, reply: FastifyReply): void {
    this.httpLatency.observe({ method: req.method, route: req.routeOptions.url ?? 'unmatched', status: String(reply.statusCode) }, reply.elapsedTime / 1000);
  }

  /** Times each commit of `store`: its `commit` is wrapped once, its behaviour unchanged. */
  timeCommits(store: AgentStore): void {
    if (timed.has(store)) return;
    timed.add(store);
    const commit = store.commit.bind(store);
    const latency = this.commitLatency;
    store.commit = async (write) => {
      const end = latency.startTimer();
      try {
        return await commit(write);
      } finally {
        end();
      }
    };
  }

  /** Nomad's `MetricsSummary` (`GET /v1/metrics`). */
  async summary(now = new Date()): Promise<Json> {
    const metrics = (await this.registry.getMetricsAsJSON()) as MetricObjectWithValues<MetricValue<string>>[];
    const gauges: Json[] = [];
    const counters: Json[] = [];
    const samples: Json[] = [];
    for (const m of metrics) {
      const name = m.name.replace(/_/g, '.');
      const type = String(m.type);
      if (type === 'gauge') {
        for (const v of m.values) gauges.push({ Name: name, Value: v.value, Labels: stringLabels(v.labels) });
      } else if (type === 'counter') {
        // A counter's total as one sample: go-metrics counts increments, which prom-client does not keep.
        for (const v of m.values) counters.push(aggregate(name, stringLabels(v.labels), 1, v.value, v.value, v.value, 1));
      } else if (type === 'summary') {
        // One sample per label set: its count, sum, and the 0 and 1 quantiles as min and max.
        const sets = new Map<string, { labels: Record<string, unknown>; count: number; sum: number; min: number; max: number }>();
        for (const v of m.values) {
          const { quantile, ...labels } = (v.labels ?? {}) as Record<string, unknown>;
          const key = JSON.stringify(labels);
          const set = sets.get(key) ?? { labels, count: 0, sum: 0, min: 0, max: 0 };
          sets.set(key, set);
          const metric = (v as { metricName?: string }).metricName ?? '';
          if (metric.endsWith('_count')) set.count = v.value;
          else if (metric.endsWith('_sum')) set.sum = v.value;
          else if (quantile === 0) set.min = v.value;
          else if (quantile === 1) set.max = v.value;
        }
        for (const s of sets.values()) if (s.count > 0) samples.push(aggregate(name, stringLabels(s.labels), s.count, s.sum, s.min * 1000, s.max * 1000, s.count, true));
      }
    }
    return { Timestamp: goTime(now), Gauges: gauges, Counters: counters, Samples: samples, Points: [] };
  }
}

const timed = new WeakSet<AgentStore>();

/** Labels as go-metrics keeps them: strings (prom-client allows numbers, as in nodejs_version_info). */
function stringLabels(labels: object | undefined): Record<string, string> {
  return Object.fromEntries(Object.entries(labels ?? {}).map(([k, v]) => [k, String(v)]));
}

/** A go-metrics aggregate sample (`Count`, `Sum`, `Min`, `Max`, `Mean`, `Rate`, `Stddev`); timings in ms, as Nomad reports them. */
function aggregate(name: string, labels: Record<string, string>, count: number, sum: number, min: number, max: number, n: number, seconds = false): Json {
  const total = seconds ? sum * 1000 : sum;
  return { Name: name, Count: count, Rate: total / 10, Sum: total, SumSq: 0, Min: min, Max: max, Mean: n > 0 ? total / n : 0, Stddev: 0, Labels: labels };
}

/** Go's `time.Time.String()` in UTC, as Nomad's summary writes its timestamp. */
function goTime(d: Date): string {
  const iso = d.toISOString();
  return `${iso.slice(0, 10)} ${iso.slice(11, 19)} +0000 UTC`;
}
