/** A started sandbox server, as the `sandbox` command serves it. */
export interface ServingSandbox {
  url: string;
  explorerUrl: string;
  port: number;
  /** The Iceberg REST catalog at /iceberg. */
  catalog?: { url: string };
  close(): Promise<void>;
}

/**
 * Prints the sandbox's URLs (stdout, one `key=value` per line) and then the `# ` comment lines of
 * `summary`, serves until SIGINT or SIGTERM, and closes it.
 */
export async function serveUntilSignalled(sandbox: ServingSandbox, summary: string[], out: NodeJS.WritableStream): Promise<void> {
  out.write(`url=${sandbox.url}\nexplorer_url=${sandbox.explorerUrl}\nport=${sandbox.port}\n`);
  if (sandbox.catalog) out.write(`catalog_url=${sandbox.catalog.url}\n`);
  for (const line of summary) out.write(line);
  await new Promise<void>((resolve) => {
    const stop = () => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      resolve();
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
  await sandbox.close();
}
