/** What the state records of a committed window (its files, its edge) and what a window's commit is handed. */
export interface FileRecord {
  key: string;
  rows: number;
  bytes: number;
  /**
   * Hex SHA-256 of the file's bytes, taken while it was written (src/sink/content-digest.ts): what
   * `verify --content` and `run --repair` compare. Absent in records of older versions.
   */
  sha256?: string;
}

export interface WindowRecord {
  unit_key: string;
  start: number;
  end: number;
  rows: number;
  files: FileRecord[];
  run_id: string;
  completed_at: string;
  /**
   * The chain's block at the window's upper edge (block windows: block end - 1), as the service
   * had it before the window's rows were read. Its hash commits to every block below it, so a
   * later run that finds another hash there knows a block at or below the edge was replaced
   * (src/state/reorg-check.ts). Absent in records of older versions and of time windows.
   */
  edge?: BlockEdge;
  /**
   * The window replaced rows an earlier commit exported (a reorganisation, --force, --rewind, a
   * repair): the rows most at risk of coming from an answer of another branch (a cache), which
   * `verify --chain-hashes` checks even where the edge matches. Absent in records of older versions.
   */
  reexported?: true;
}

/** A data file written on local disk, uploaded as `key` when its window commits. */
export interface StagedFile extends FileRecord {
  /** The local file; the commit removes it, uploaded or not. */
  path: string;
  contentType: string;
  sha256: string;
  /** Hex MD5 of its bytes, taken while it was written: sent with the upload for the store to check. */
  md5: string;
}

/** What a window's commit is handed: the window, its staged files, and its edge (block windows). */
export interface WindowCommit {
  unit_key: string;
  start: number;
  end: number;
  run_id: string;
  files: StagedFile[];
  edge?: BlockEdge | undefined;
}

export interface BlockEdge {
  block_number: number;
  block_hash: string;
}
