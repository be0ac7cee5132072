/** A problem the job file's checks find, located by its path in the file (the loader adds file, line and column). */
import type { z } from 'zod';
import type { ProblemParams } from '../yaml-file/issues.js';

/** The refinement context of the job file's checks. */
export type Ctx = z.core.$RefinementCtx<unknown>;

export function issue(ctx: Ctx, path: (string | number)[], message: string, params: ProblemParams = {}, input?: unknown) {
  ctx.issues.push({ code: 'custom', message, path, input, params: params as Record<string, unknown> });
}
