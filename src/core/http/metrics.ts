/**
 * Prometheus metrics of one emulator instance, in its own registry (several instances share a test
 * process; the global default registry is never used). Counters are fed by the request pipeline and by
 * synthesis; gauges read the state when scraped.
 */
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { DeliveryRecord } from '../journal/delivery.js';

export interface MetricsSources {
  /** Open WebSockets by path. */
  sockets(): Map<string, number>;
  /** Responses still streaming (event streams, chunked audio), by service. */
  streams(): Map<string, number>;
}

export interface RequestLabels {
  service: string;
  method: string;
  /** The route pattern (`/v1/files/:id`), never the raw URL: labels stay few. */
  route: string;
  status: number;
  /** `base_resp.status_code` or the envelope's `error_code`; empty when the answer carries none. */
  code: string;
}

/** Requests of one label set not yet handed to prom-client: counted here, flushed when scraped. */
interface PendingRequests {
  labels: RequestLabels;
  count: number;
}

/** What one route (pattern, method, service) is counted in. */
interface RouteMeter {
  latency: LatencySeries;
  outcomes: Map<number, Map<number | undefined, PendingRequests>>;
}

const LATENCY_NAME = 'emulator_request_duration_seconds';
const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

/** One route's durations: a count per bucket (not cumulative; the last one is +Inf), their sum and count. */
interface LatencySeries {
  labels: { service: string; method: string; route: string };
  counts: Float64Array;
  sum: number;
  count: number;
}

/**
 * The request-duration histogram, written as prom-client writes its own (`_bucket` with `le`, `_sum`,
 * `_count`) but kept as plain bucket counts per route: an observation is a short loop over the bounds,
 * where prom-client's Histogram validates and hashes its label object on every call, a visible share
 * of a cheap answer. Registered in the registry as a metric of its own.
 */
class LatencyHistogram {
  readonly name = LATENCY_NAME;
  readonly help = 'Time from request to the end of its answer (a stream until its last chunk, a WebSocket until it closes)';
  readonly type = 'histogram';
  readonly aggregator = 'sum';
  private readonly series = new Map<string, LatencySeries>();

  seriesFor(service: string, method: string, route: string): LatencySeries {
    const key = `${service}\u0000${method}\u0000${route}`;
    let series = this.series.get(key);
    if (!series) {
      series = { labels: { service, method, route }, counts: new Float64Array(LATENCY_BUCKETS.length + 1), sum: 0, count: 0 };
      this.series.set(key, series);
    }
    return series;
  }

  static observe(series: LatencySeries, seconds: number): void {
    let i = 0;
    while (i < LATENCY_BUCKETS.length && seconds > LATENCY_BUCKETS[i]!) i++;
    series.counts[i]!++;
    series.sum += seconds;
    series.count++;
  }

  get() {
    const values: { labels: Record<string, string | number>; value: number; metricName: string }[] = [];
    for (const s of this.series.values()) {
      let cumulative = 0;
      LATENCY_BUCKETS.forEach((le, i) => {
        cumulative += s.counts[i]!;
        values.push({ labels: { ...s.labels, le }, value: cumulative, metricName: `${LATENCY_NAME}_bucket` });
      });
      values.push({ labels: { ...s.labels, le: '+Inf' }, value: s.count, metricName: `${LATENCY_NAME}_bucket` });
      values.push({ labels: s.labels, value: s.sum, metricName: `${LATENCY_NAME}_sum` });
      values.push({ labels: s.labels, value: s.count, metricName: `${LATENCY_NAME}_count` });
    }
    return { name: this.name, help: this.help, type: this.type, values, aggregator: this.aggregator };
  }

  /** Zeroes every series (they stay: the pending request counts point at them). */
  reset(): void {
    for (const s of this.series.values()) {
      s.counts.fill(0);
      s.sum = 0;
      s.count = 0;
    }
  }
}

/**
 * The buckets of the delivery histograms (seconds; the real-time factor in audio seconds per wall
 * second), documented in docs/voice-agents.md. Latency buckets sit around the budgets voice agents
 * are held to (300–800 ms).
 */
export const DELIVERY_BUCKETS = {
  latency: [0.05, 0.1, 0.2, 0.3, 0.5, 0.8, 1, 1.5, 2, 3, 5, 10],
  cut: [0, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5],
  gap: [0, 0.02, 0.05, 0.1, 0.25, 0.5, 1, 2, 5],
  rtf: [0.5, 0.8, 1, 1.2, 1.5, 2, 3, 5, 10, 50],
} as const;

const DELIVERY_LABELS = ['service', 'method', 'path'] as const;
type DeliveryLabels = Record<(typeof DELIVERY_LABELS)[number], string>;

/** The histograms of audio delivery, one observation per entry or per answer as the report counts them. */
class DeliveryMetrics {
  private readonly firstAudio: Histogram<string>;
  private readonly turnLatency: Histogram<string>;
  private readonly rtf: Histogram<string>;
  private readonly overrun: Histogram<string>;
  private readonly stop: Histogram<string>;
  private readonly gap: Histogram<string>;
  private readonly stalls: Counter<string>;

  constructor(registers: Registry[]) {
    const labelNames = DELIVERY_LABELS;
    const histogram = (name: string, help: string, buckets: readonly number[]) => new Histogram({ name, help, labelNames, buckets: [...buckets], registers });
    this.firstAudio = histogram(
      'emulator_first_audio_seconds',
      'Per audio stream: time from the request (a socket: its first answer) to its first audio',
      DELIVERY_BUCKETS.latency,
    );
    this.turnLatency = histogram(
      'emulator_turn_latency_seconds',
      "Per answer (turn): time from its start (the request, the text piece, the end of the user's utterance) to its first audio",
      DELIVERY_BUCKETS.latency,
    );
    this.rtf = histogram('emulator_delivered_rtf', 'Per audio stream: seconds of audio delivered per wall second', DELIVERY_BUCKETS.rtf);
    this.overrun = histogram(
      'emulator_audio_overrun_seconds',
      'Per answer the client left or cancelled: seconds of audio sent after the cut',
      DELIVERY_BUCKETS.cut,
    );
    this.stop = histogram(
      'emulator_audio_stop_seconds',
      'Per answer the client left or cancelled: time from the cut to the last audio sent',
      DELIVERY_BUCKETS.cut,
    );
    this.gap = histogram(
      'emulator_audio_gap_seconds',
      'Per audio stream: total length of the stalls a listener playing from the first audio would hear',
      DELIVERY_BUCKETS.gap,
    );
    this.stalls = new Counter({ name: 'emulator_audio_stalls_total', help: 'Stalls in delivered audio', labelNames, registers });
  }

  observe(labels: DeliveryLabels, record: DeliveryRecord): void {
    const whole = record.figures();
    if (whole.first_audio_ms !== null) this.firstAudio.observe(labels, whole.first_audio_ms / 1000);
    if (whole.rtf !== null) this.rtf.observe(labels, whole.rtf);
    this.gap.observe(labels, whole.gap_ms / 1000);
    this.stalls.inc(labels, whole.stalls);
    for (const t of record.turnFigures()) {
      if (t.first_audio_ms !== null) this.turnLatency.observe(labels, t.first_audio_ms / 1000);
      if (t.overrun_ms !== undefined) this.overrun.observe(labels, t.overrun_ms / 1000);
      if (t.stop_ms !== undefined) this.stop.observe(labels, t.stop_ms / 1000);
    }
  }
}

export class Metrics {
  readonly registry = new Registry();
  private readonly requests: Counter<string>;
  private readonly latency = new LatencyHistogram();
  private readonly audio: Counter<string>;
  private readonly deliveryMetrics: DeliveryMetrics;
  private readonly releases: Counter<string>;
  /**
   * Every request is counted here first: prom-client hashes its label object on every call, a visible
   * share of a cheap answer, while a scrape is rare. The counter takes the pending counts when it is
   * collected; durations go straight into the histogram's buckets.
   */
  private readonly pending: PendingRequests[] = [];
  /** Route → method → service: its latency series and pending counts by status, then spec code. */
  private readonly meters = new Map<string, Map<string, Map<string, RouteMeter>>>();

  constructor(sources: MetricsSources) {
    const registers = [this.registry];
    const flush = () => this.flush();
    this.requests = new Counter({
      name: 'emulator_requests_total',
      help: 'Requests answered, by service, method, route pattern, HTTP status and spec code',
      labelNames: ['service', 'method', 'route', 'status', 'code'],
      registers,
      collect: flush,
    });
    this.registry.registerMetric(this.latency as unknown as Parameters<Registry['registerMetric']>[0]);
    this.audio = new Counter({
      name: 'emulator_audio_synthesized_seconds_total',
      help: 'Seconds of audio synthesized, by output format',
      labelNames: ['format'],
      registers,
    });
    this.deliveryMetrics = new DeliveryMetrics(registers);
    this.releases = new Counter({
      name: 'emulator_idle_memory_releases_total',
      help: 'Times the CLI gave back the memory of a load once idle (--idle-release-ms)',
      registers,
    });
    new Gauge({
      name: 'emulator_open_websockets',
      help: 'WebSockets open now, by path',
      labelNames: ['path'],
      registers,
      collect() {
        this.reset();
        for (const [path, n] of sources.sockets()) this.set({ path }, n);
      },
    });
    new Gauge({
      name: 'emulator_open_streams',
      help: 'Streaming responses in flight now, by service',
      labelNames: ['service'],
      registers,
      collect() {
        this.reset();
        for (const service of ['speech', 'platform']) this.set({ service }, 0);
        for (const [service, n] of sources.streams()) this.set({ service }, n);
      },
    });
    new Gauge({
      name: 'emulator_process_memory_bytes',
      help: 'Memory of the emulator process (process.memoryUsage)',
      labelNames: ['type'],
      registers,
      collect() {
        const m = process.memoryUsage();
        this.set({ type: 'rss' }, m.rss);
        this.set({ type: 'heap_total' }, m.heapTotal);
        this.set({ type: 'heap_used' }, m.heapUsed);
        this.set({ type: 'external' }, m.external);
        this.set({ type: 'array_buffers' }, m.arrayBuffers);
      },
    });
  }

  /**
   * Counts one finished request. The pending count of its label set is found through nested maps
   * (route, then status, then code): no key string or label object is made per request.
   */
  request(service: string, method: string, route: string, status: number, code: number | undefined, seconds: number): void {
    let meter = this.meters.get(route)?.get(method)?.get(service);
    if (!meter) meter = this.meterOf(service, method, route);
    let byCode = meter.outcomes.get(status);
    if (!byCode) meter.outcomes.set(status, (byCode = new Map()));
    let pending = byCode.get(code);
    if (!pending) {
      pending = { labels: { service, method, route, status, code: code === undefined ? '' : String(code) }, count: 0 };
      byCode.set(code, pending);
      this.pending.push(pending);
    }
    pending.count++;
    LatencyHistogram.observe(meter.latency, seconds);
  }

  private meterOf(service: string, method: string, route: string): RouteMeter {
    let byMethod = this.meters.get(route);
    if (!byMethod) this.meters.set(route, (byMethod = new Map()));
    let byService = byMethod.get(method);
    if (!byService) byMethod.set(method, (byService = new Map()));
    const meter: RouteMeter = { latency: this.latency.seriesFor(service, method, route), outcomes: new Map() };
    byService.set(service, meter);
    return meter;
  }

  /** Hands every pending count to prom-client (before a scrape). */
  private flush(): void {
    for (const pending of this.pending) {
      if (pending.count) this.requests.inc({ ...pending.labels, status: String(pending.labels.status) }, pending.count);
      pending.count = 0;
    }
  }

  /** The delivery figures of a finished audio stream (its journal entry's), by operation. */
  /** The CLI gave its memory back once idle (core/idle-release.ts). */
  idleRelease(): void {
    this.releases.inc();
  }

  delivery(service: string, method: string, path: string, record: DeliveryRecord): void {
    this.deliveryMetrics.observe({ service, method, path }, record);
  }

  /** Call where a synthesis completes (whole file encoded, last chunk of a stream sent). */
  audioSynthesized(format: string, seconds: number): void {
    if (Number.isFinite(seconds) && seconds > 0) this.audio.inc({ format }, seconds);
  }

  text(): Promise<string> {
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }
}
