import { afterEach } from 'vitest';

export interface Closable {
  close(): Promise<unknown>;
}

/**
 * Lists for what a test opens: push clients and the servers (or sandboxes) they talk to. After
 * each test the clients are closed, then the servers, and both lists are emptied.
 *   const { servers, clients } = closeAfterEach();
 */
export function closeAfterEach(): { servers: Closable[]; clients: Closable[] } {
  const servers: Closable[] = [];
  const clients: Closable[] = [];
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((c) => c.close()));
    await Promise.all(servers.splice(0).map((s) => s.close()));
  });
  return { servers, clients };
}
