import path from 'node:path';

/**
 * Why `p` cannot name a local folder on this system, or undefined when it can. On Linux and macOS
 * a Windows path (`C:\data\insight`, `\\server\share`, `out\m3`) is a legal file name: it would
 * become one folder of that literal name under the working directory, never what was meant.
 * (A POSIX path on Windows, `/data/insight`, is the folder on the current drive, as meant.)
 */
export function foreignPathProblem(p: string, platform: NodeJS.Platform = process.platform): string | undefined {
  if (platform === 'win32') return undefined;
  const drive = /^[a-zA-Z]:/.test(p);
  if (!drive && !p.includes('\\')) return undefined;
  return `is a Windows path (${drive ? 'a drive letter' : '"\\" separators'}): this system takes "/" paths, and would make one folder named "${p}"`;
}

/** A local path resolved against `cwd` by the rules of `platform`. */
export function resolveLocalPath(p: string, cwd: string, platform: NodeJS.Platform = process.platform): string {
  return (platform === 'win32' ? path.win32 : path.posix).resolve(cwd, p);
}
