import { request } from 'node:http';
import { connect } from 'node:net';
import { Inject, Injectable } from '@nestjs/common';
import type { Container, ProbeHandler } from '#contracts';
import type { ContainerRuntime } from '#runtime';
import { AGENT_CONFIG, RUNTIME } from '../agent.constants.js';
import type { AgentConfig } from '../agent.config.js';
import { dialFailure } from '../net/dial-failure.js';

/** How one handler run went: success, and what it said (for events). */
export interface HandlerOutcome {
  ok: boolean;
  message: string;
  /** An exec handler's combined output, which is all the kubelet's prober says of a failed exec probe. */
  output?: string;
}

/** The port a handler names: a number, or the name of one of the container's ports. */
export function resolvePort(port: number | string, container: Container): number | undefined {
  if (typeof port === 'number') return port;
  return container.ports?.find((p) => p.name === port)?.containerPort;
}

/**
 * Runs probe and hook handlers as the kubelet does: exec inside the container, HTTP GET
 * and TCP connect to the pod IP. Never throws; a failure is an outcome.
 */
@Injectable()
export class HandlerRunner {
  constructor(
    @Inject(RUNTIME) private readonly runtime: ContainerRuntime,
    @Inject(AGENT_CONFIG) private readonly config: AgentConfig,
  ) {}

  async run(handler: ProbeHandler, target: { containerId: string; podIP?: string; container: Container }, timeoutMs: number): Promise<HandlerOutcome> {
    try {
      if (handler.exec) {
        const result = await this.runtime.exec(target.containerId, handler.exec.command, timeoutMs);
        if (result.timedOut) return { ok: false, message: `command timed out after ${timeoutMs / 1000}s` };
        return {
          ok: result.exitCode === 0,
          message: result.exitCode === 0 ? result.output : `command exited with ${result.exitCode}: ${result.output.trim()}`,
          output: result.output,
        };
      }
      // A hollow node's pod IPs belong to no one: its network probes are simulated, never sent.
      if (this.config.RUNTIME === 'fake' && (handler.httpGet || handler.tcpSocket)) return { ok: true, message: 'hollow node: simulated' };
      if (handler.httpGet) {
        const port = resolvePort(handler.httpGet.port, target.container);
        const host = handler.httpGet.host ?? target.podIP;
        if (!port || !host) return { ok: false, message: `no ${port ? 'pod IP' : `port ${String(handler.httpGet.port)}`} to probe` };
        const url = `http://${host.includes(':') ? `[${host}]` : host}:${port}${handler.httpGet.path ?? '/'}`;
        const headers = Object.fromEntries((handler.httpGet.httpHeaders ?? []).map((h) => [h.name, h.value]));
        const status = await httpGet(url, { 'user-agent': 'jetlet-probe/0.1', ...headers }, timeoutMs);
        const ok = status >= 200 && status < 400;
        return { ok, message: ok ? `HTTP ${status}` : `HTTP probe failed with statuscode: ${status}` };
      }
      if (handler.tcpSocket) {
        const port = resolvePort(handler.tcpSocket.port, target.container);
        const host = handler.tcpSocket.host ?? target.podIP;
        if (!port || !host) return { ok: false, message: `no ${port ? 'pod IP' : `port ${String(handler.tcpSocket.port)}`} to probe` };
        return await tcpConnect(host, port, timeoutMs);
      }
      return { ok: false, message: 'no handler' };
    } catch (error) {
      return { ok: false, message: (error as Error).message };
    }
  }
}

/**
 * One GET as the kubelet's HTTP prober sends it: on a connection of its own, closed after
 * (no keep-alive), redirects not followed, the body discarded, the whole exchange within
 * `timeoutMs`. Resolves with the status code; a failure reads as the kubelet words it. On
 * node:http rather than fetch: a probe costs the agent about half the CPU.
 */
function httpGet(url: string, headers: Record<string, string>, timeoutMs: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(url, { agent: false, headers }, (response) => {
      // Torn down by the timeout while the body still came: nothing waits for it any more.
      response.on('error', () => undefined);
      response.resume();
      resolve(response.statusCode ?? 0);
    });
    const timer = setTimeout(() => req.destroy(new Error('context deadline exceeded (Client.Timeout exceeded while awaiting headers)')), timeoutMs);
    req.once('close', () => clearTimeout(timer));
    req.once('error', (error: NodeJS.ErrnoException) =>
      reject(new Error(`Get "${url}": ${error.syscall === 'connect' ? dialFailure(error, new URL(url).host) : error.message}`)),
    );
    req.end();
  });
}

function tcpConnect(host: string, port: number, timeoutMs: number): Promise<HandlerOutcome> {
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    const done = (outcome: HandlerOutcome): void => {
      socket.destroy();
      resolve(outcome);
    };
    socket.setTimeout(timeoutMs, () => done({ ok: false, message: `dial tcp ${host}:${port}: i/o timeout` }));
    socket.once('connect', () => done({ ok: true, message: 'connected' }));
    socket.once('error', (error: NodeJS.ErrnoException) => done({ ok: false, message: dialFailure(error, `${host}:${port}`) }));
  });
}
