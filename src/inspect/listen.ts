/** Starting an HTTP server and learning its port, shared by the live and replay servers. */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** Listens on `host:port` (0 = any free port); resolves with the port, rejects with the listen error. */
export function listen(http: Server, port: number, host: string): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    http.once('error', reject);
    http.listen(port, host, () => {
      http.off('error', reject);
      resolve((http.address() as AddressInfo).port);
    });
  });
}
