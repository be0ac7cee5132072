/**
 * Issue 44 item 1 on S3 (radosgw): the catalog crash trials of the local file beside this one with
 * an S3 destination and the sandbox catalog's metadata files on S3 too (under each table's
 * location, its writeObject knob given the test bucket's client). A real SIGKILL of the CLI in a
 * commit through the catalog; right after the kill each table's current snapshot in the catalog
 * reads from S3 (icebird) as whole windows; the next run exits 0 and leaves each table equal to a
 * fresh export with one snapshot per run that changed it, and `verify` through the catalog says ok.
 *
 * Seeded: RELIABILITY_SEED=<n> repeats a sample. By default two points of an appending run: a write
 * of the snapshot's files (a manifest or manifest list, before or after it) and a commit the
 * catalog applied whose answer never arrived; INSIGHT_EXPORT_LONG_TESTS=1 runs every point of
 * both modes (append and --force), the commit request included.
 */
import { catalogCrashTrials } from '../helpers/catalog-crash-trials.js';

catalogCrashTrials({
  on: 's3',
  defaultPhases: ['a write of the snapshot files', 'commit applied, no answer'],
  defaultModes: ['append'],
});
