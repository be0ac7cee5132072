/**
 * Issue 14.9: a log line printed during a run broke into the TTY progress bar (the line was
 * appended to the bar). A log line must clear the bar, print on its own lines, and the bar is
 * drawn again below it.
 */
import { afterEach, expect, it } from 'vitest';
import { ProgressLine } from '../../src/commands/progress.js';
import { createLogger, setStatusLine } from '../../src/log.js';
import { FakeTty } from '../helpers/fake-tty.js';

afterEach(() => setStatusLine(null));

it('a log line during a run clears the progress bar, prints on its own line, and the bar is drawn again below it', () => {
  const tty = new FakeTty();
  const progress = new ProgressLine(tty as unknown as NodeJS.WriteStream);
  const logger = createLogger({ level: 'info', pretty: false, destination: tty });
  progress.setTotal(3);
  progress.on({ kind: 'unit-done', unitKey: 'u', start: 0, end: 1, rows: 5, files: 1, bytes: 10 });
  logger.warn({ chain: 1 }, 'something to say');
  progress.on({ kind: 'unit-done', unitKey: 'u', start: 1, end: 2, rows: 5, files: 1, bytes: 10 });
  logger.info('second line');

  const lines = tty.screen.map((l) => l.trimEnd());
  const logLines = lines.filter((l) => l.includes('"msg"'));
  expect(logLines).toHaveLength(2);
  // Each log line is a whole JSON line on its own: nothing of the bar before or after it.
  for (const l of logLines) expect(() => JSON.parse(l) as unknown).not.toThrow();
  expect(JSON.parse(logLines[0]!)).toMatchObject({ msg: 'something to say', chain: 1 });
  // The bar is the last line, showing the latest state, and shown once.
  expect(lines.at(-1)).toMatch(/^\[#+-*\] 2\/3 windows/);
  expect(lines.filter((l) => l.includes('windows'))).toHaveLength(1);

  progress.finish();
  logger.info('after the run');
  const after = tty.screen.map((l) => l.trimEnd());
  // finish() leaves the final bar on its own line; later log lines go below it untouched.
  expect(after.filter((l) => l.includes('windows'))).toEqual([expect.stringMatching(/2\/3 windows/)]);
  expect(after.findIndex((l) => l.includes('after the run'))).toBeGreaterThan(after.findIndex((l) => l.includes('windows')));
});
