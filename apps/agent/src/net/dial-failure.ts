/**
 * A connection that failed, in the words of Go's dialer (`connect: connection refused`), as the
 * kubelet's probe, hook and port-forward messages carry it; any other error as Node says it.
 */
export function dialFailure(error: NodeJS.ErrnoException, hostPort: string): string {
  if (error.code === 'ECONNREFUSED') return `dial tcp ${hostPort}: connect: connection refused`;
  if (error.code === 'EHOSTUNREACH') return `dial tcp ${hostPort}: connect: no route to host`;
  return `dial tcp ${hostPort}: ${error.message}`;
}
