/**
 * Issue 44 item 1: a real SIGKILL of the CLI at every point of a commit through an Iceberg REST
 * catalog (the sandbox's, at /iceberg): before and after each write of the snapshot's files (its
 * manifests and manifest list: the catalog writes the metadata file), just before the catalog's
 * commit request (the catalog never sees it), and after the catalog applied the commit but before
 * any answer arrived (the sandbox's dropCommitAnswers knob closes the connection instead of
 * answering; the run is killed as its request fails). The killed run appends windows, or is a
 * --force run whose commit is an overwrite. Right after the kill each table's current snapshot in
 * the catalog reads (icebird) as whole windows; the next run exits 0 and leaves each table equal
 * to a fresh export (every row once), with exactly one snapshot per run that changed it: none
 * lost, none doubled (the killed run's, if it landed, and the next run's are never both there).
 * After the next run, `verify` through the catalog says ok. Every request and answer of the catalog
 * validates against the spec's schemas. The S3 variant is the file beside this one named ...-on-s3.
 *
 * Seeded: RELIABILITY_SEED=<n> repeats a sample. By default one point of each phase (a write of
 * the snapshot's files, the commit request, the commit applied and unanswered);
 * INSIGHT_EXPORT_LONG_TESTS=1 runs every point of both modes.
 */
import { catalogCrashTrials } from '../helpers/catalog-crash-trials.js';

catalogCrashTrials({
  on: 'local',
  defaultPhases: ['a write of the snapshot files', 'before the commit request', 'commit applied, no answer'],
  defaultModes: ['append', 'force'],
});
