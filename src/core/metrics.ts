import { Counter, Gauge, Histogram, Registry } from 'prom-client';

/**
 * Prometheus metrics of one emulator instance, in its own registry (several instances share a test
 * process; the global default registry is never used). Counters are fed by the request pipeline and by
 * synthesis; gauges read the state when scraped.
 */
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
  seconds: number[];
}

/** Flush a label set's latencies early past this many, so an unscraped emulator stays bounded. */
const PENDING_SECONDS_MAX = 1024;

export class Metrics {
  readonly registry = new Registry();
  private readonly requests: Counter<string>;
  private readonly latency: Histogram<string>;
  private readonly audio: Counter<string>;
  /**
   * Every request is recorded here first: prom-client hashes its label object on every call, a visible
   * share of a cheap answer, while a scrape is rare. The counter and histogram take the pending
   * figures when they are collected.
   */
  private readonly pending = new Map<string, PendingRequests>();

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
    this.latency = new Histogram({
      name: 'emulator_request_duration_seconds',
      help: 'Time from request to the end of its answer (a stream until its last chunk, a WebSocket until it closes)',
      labelNames: ['service', 'method', 'route'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
      registers,
      collect: flush,
    });
    this.audio = new Counter({
      name: 'emulator_audio_synthesized_seconds_total',
      help: 'Seconds of audio synthesized, by output format',
      labelNames: ['format'],
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

  request(labels: RequestLabels, seconds: number): void {
    const key = `${labels.service}\u0000${labels.method}\u0000${labels.route}\u0000${labels.status}\u0000${labels.code}`;
    let pending = this.pending.get(key);
    if (!pending) {
      pending = { labels, count: 0, seconds: [] };
      this.pending.set(key, pending);
    }
    pending.count++;
    pending.seconds.push(seconds);
    if (pending.seconds.length >= PENDING_SECONDS_MAX) this.flushOne(pending);
  }

  /** Hands every pending figure to prom-client (before a scrape). */
  private flush(): void {
    for (const pending of this.pending.values()) this.flushOne(pending);
  }

  private flushOne(pending: PendingRequests): void {
    const { labels } = pending;
    if (pending.count) this.requests.inc({ ...labels, status: String(labels.status) }, pending.count);
    const route = { service: labels.service, method: labels.method, route: labels.route };
    for (const s of pending.seconds) this.latency.observe(route, s);
    pending.count = 0;
    pending.seconds.length = 0;
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
