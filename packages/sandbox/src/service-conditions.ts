import type { IncomingMessage } from 'node:http';
import { Rng } from './prng.js';
import type { FaultKind, FaultOptions, SandboxOptions, SandboxRoute } from './options.js';

export const FAULT_ORDER: FaultKind[] = ['http500', 'http502', 'http503', 'http429', 'reset', 'truncate', 'stall'];

/**
 * The conditions the server answers under, changeable while it runs: added latency, a rate
 * limit, injected faults, and the credentials it asks for. Options are validated by the caller.
 */
export class ServiceConditions {
  private faultOptions: FaultOptions | null = null;
  private faultRng = new Rng(1, 0xfa);
  private firstFaults: FaultKind[] = [];
  private latency: SandboxOptions['latency'] | null;
  private readonly latencyRng: Rng;
  private limit: SandboxOptions['rateLimit'] | null = null;
  private tokens = 0;
  private lastRefill = 0;

  constructor(private readonly opts: SandboxOptions) {
    this.latency = opts.latency ?? null;
    this.latencyRng = new Rng(opts.seed ?? 42, 0x1a7);
    this.setFaults(opts.faults ?? null);
    this.setRateLimit(opts.rateLimit ?? null);
  }

  setFaults(f: FaultOptions | null): void {
    this.faultOptions = f;
    this.faultRng = new Rng(f?.seed ?? 1, 0xfa);
    this.firstFaults = [...(f?.first ?? [])];
  }

  setLatency(l: SandboxOptions['latency'] | null): void {
    this.latency = l ?? null;
  }

  setRateLimit(r: SandboxOptions['rateLimit'] | null): void {
    this.limit = r;
    this.tokens = r ? r.requestsPerSecond : 0;
    this.lastRefill = performance.now();
  }

  /** The latency to add to this request, in ms (0: none). */
  delayMs(): number {
    const l = this.latency;
    return l ? l.fixedMs + this.latencyRng.float() * l.jitterMs : 0;
  }

  /** False when the request is over the rate limit (a token bucket of one second). */
  takeToken(): boolean {
    if (!this.limit) return true;
    const now = performance.now();
    const rps = this.limit.requestsPerSecond;
    this.tokens = Math.min(Math.max(rps, 1), this.tokens + ((now - this.lastRefill) / 1000) * rps);
    this.lastRefill = now;
    if (this.tokens >= 1) {
      this.tokens -= 1;
      return true;
    }
    return false;
  }

  get retryAfterSeconds(): number {
    return this.limit?.retryAfterSeconds ?? 1;
  }

  authorised(req: IncomingMessage): boolean {
    const a = this.opts.auth;
    if (!a || (a.clientId === undefined && a.secretKey === undefined)) return true;
    if (a.secretKey !== undefined && req.headers['x-secret-key'] === a.secretKey) return true;
    if (a.clientId !== undefined && req.headers['x-client-id'] === a.clientId) return true;
    return false;
  }

  /** The fault to inject into a request of this route, drawn with the faults' seed; null: none. */
  pickFault(route: SandboxRoute): FaultKind | null {
    const f = this.faultOptions;
    if (!f) return null;
    if (f.routes && !f.routes.includes(route)) return null;
    const scripted = this.firstFaults.shift();
    if (scripted) return scripted;
    const u = this.faultRng.float();
    let acc = 0;
    for (const kind of FAULT_ORDER) {
      acc += f.rates[kind] ?? 0;
      if (u < acc) return kind;
    }
    return null;
  }

  /** A coin flip from the faults' sequence (how a reset happens). */
  faultCoin(): boolean {
    return (this.faultRng.next() & 1) === 1;
  }

  get faults(): FaultOptions | null {
    return this.faultOptions;
  }
}
