import type { RemovedStreamsNote } from '../state/removed-streams.js';

/** The lines `plan` and `run` print for the streams a job no longer has that are still at its destination. */
export function removedStreamsLines(note: RemovedStreamsNote | undefined | null, jobFile?: string): string[] {
  if (!note) return [];
  const shown = note.streams.slice(0, 5).map((s) => `    ${s.unit}: ${s.windows} window(s)`);
  const more = note.streams.length - shown.length;
  return [
    `  NOT IN THE JOB: ${note.streams.length} stream(s) the job no longer has still have windows at the destination:`,
    ...shown,
    ...(more > 0 ? [`    ... and ${more} more (insight-export retire <job file>)`] : []),
    `  next: ${jobFile ? note.next.replaceAll('<job file>', jobFile) : note.next}`,
  ];
}
