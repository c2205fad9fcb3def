import { createServer, type Server } from 'node:http';

/**
 * Answers /healthz while the agent cannot start yet (the bus is unreachable and
 * registration keeps retrying), so a supervisor sees why instead of a refused connection.
 * Closed once the agent's own HTTP server takes the port over.
 */
export async function serveStartupHealth(port: number, address: string, reason: () => string): Promise<Server | undefined> {
  const server = createServer((req, res) => {
    res.writeHead(503, { 'content-type': 'text/plain' });
    res.end(`not ready: ${reason()}\n`);
  });
  return new Promise((resolve) => {
    // A port already taken (or 0) is no reason to block the start: health then waits for the real server.
    server.once('error', () => resolve(undefined));
    server.listen(port, address, () => resolve(port === 0 ? (server.close(), undefined) : server));
  });
}
