/** The server's pending timers (latency sleeps, stalled bodies), all cleared when it closes. */
export class Timers {
  private readonly pending = new Set<NodeJS.Timeout>();

  after(ms: number, fn: () => void): void {
    const t = setTimeout(() => {
      this.pending.delete(t);
      fn();
    }, ms);
    this.pending.add(t);
  }

  sleep(ms: number): Promise<void> {
    return new Promise<void>((resolve) => this.after(ms, resolve));
  }

  clear(): void {
    for (const t of this.pending) clearTimeout(t);
    this.pending.clear();
  }
}
