/**
 * A worker of `run --workers` ends with its parent. The parent starts it with an IPC channel that
 * carries no message; the kernel closes the channel when the parent ends, however it ends (SIGKILL,
 * out of memory), and the worker then stops as on SIGTERM: its run stops, gives its lease back and
 * exits. The channel does not keep the worker alive otherwise.
 */
export function endWithParent(): void {
  const channel = process.channel;
  if (!channel) return; // `--worker-of` given by hand, with no parent to watch
  process.once('disconnect', () => {
    // No one reads this process's output any more: what it still writes is dropped, not an error.
    process.stderr.on('error', () => undefined);
    process.stdout.on('error', () => undefined);
    process.kill(process.pid, 'SIGTERM');
  });
  channel.unref();
}
