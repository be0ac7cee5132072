import { readFileSync, readlinkSync } from 'node:fs';
import os from 'node:os';

/** Who a process is, so that another process of the same machine can tell whether it still runs. */
export interface ProcessIdentity {
  host: string;
  pid: number;
  /** The kernel's boot id and the pid namespace; null where they cannot be read (not Linux). */
  bootId: string | null;
}

export function thisProcess(): ProcessIdentity {
  let bootId: string | null;
  try {
    // Containers may share a host name and a kernel but not their pids: the pid namespace counts too.
    bootId = `${readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim()} ${readlinkSync('/proc/self/ns/pid')}`;
  } catch {
    bootId = null; // not Linux: a crashed process is then only recognised by other means (expiry, age)
  }
  return { host: os.hostname(), pid: process.pid, bootId };
}

export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** True when `other` ran on this machine (same host, boot and pid namespace) and its pid is gone. */
export function isDeadHere(
  other: ProcessIdentity,
  me: Pick<ProcessIdentity, 'host' | 'bootId'>,
  isAlive: (pid: number) => boolean,
): boolean {
  const sameMachine = other.host === me.host && other.bootId !== null && other.bootId === me.bootId;
  return sameMachine && Number.isSafeInteger(other.pid) && other.pid > 0 && !isAlive(other.pid);
}
