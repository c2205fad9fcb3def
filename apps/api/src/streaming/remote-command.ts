import type { WebSocket } from 'ws';
import type { PodStream, PodStreamOutcome } from './pod-stream.js';

/**
 * The WebSocket subprotocols of Kubernetes' remote command (exec, attach) that jetlet
 * speaks, best first. kubectl 1.32 asks for v5 only; v5 is v4 plus the client's signal that
 * it closed a stream (stdin at end of file). Every message is binary: one byte of channel,
 * then the payload.
 */
export const REMOTE_COMMAND_PROTOCOLS = ['v5.channel.k8s.io', 'v4.channel.k8s.io'] as const;

/** The channels of k8s.io/apimachinery/pkg/util/remotecommand. */
export const CHANNEL = { stdin: 0, stdout: 1, stderr: 2, error: 3, resize: 4, close: 255 } as const;

/** A metav1.Status as the error channel carries it, and as kubectl's errorDecoderV4 reads it. */
export interface RemoteCommandStatus {
  kind: 'Status';
  apiVersion: 'v1';
  metadata: Record<string, never>;
  status: 'Success' | 'Failure';
  message?: string;
  reason?: string;
  code?: number;
  details?: { causes: Array<{ reason: string; message: string }> };
}

/**
 * What the error channel says at the end of a stream: Success, a non-zero exit code the way
 * the kubelet reports it (reason NonZeroExitCode, cause ExitCode with the code as its
 * message, which kubectl turns into its own exit code), or why the stream failed.
 * Undefined when the client went away and nobody is left to tell.
 */
export function endStatus(outcome: PodStreamOutcome): RemoteCommandStatus | undefined {
  const base = { kind: 'Status', apiVersion: 'v1', metadata: {} } as const;
  if (outcome.kind === 'cancelled') return undefined;
  if (outcome.kind === 'failed') return { ...base, status: 'Failure', message: outcome.message, reason: 'InternalError', code: 500 };
  const { exitCode, code, reason, message } = outcome.end;
  if (message !== undefined) return { ...base, status: 'Failure', message, reason: reason ?? 'InternalError', code: code ?? 500 };
  if (exitCode === undefined || exitCode === 0) return { ...base, status: 'Success' };
  return {
    ...base,
    status: 'Failure',
    message: `command terminated with non-zero exit code: exit status ${exitCode}`,
    reason: 'NonZeroExitCode',
    details: { causes: [{ reason: 'ExitCode', message: String(exitCode) }] },
  };
}

/** A resize message's size, or undefined for anything that is not `{"Width":w,"Height":h}` with sane numbers. */
export function parseTerminalSize(payload: Buffer): { width: number; height: number } | undefined {
  let size: unknown;
  try {
    size = JSON.parse(payload.toString('utf8'));
  } catch {
    return undefined;
  }
  const { Width: width, Height: height } = (size ?? {}) as { Width?: unknown; Height?: unknown };
  const ok = (n: unknown): n is number => typeof n === 'number' && Number.isInteger(n) && n >= 0 && n <= 65535;
  return ok(width) && ok(height) ? { width, height } : undefined;
}

/**
 * Joins a client's WebSocket to a stream with the agent: stdin, resize and (v5) the close
 * of stdin go to the agent; stdout and stderr come back on their channels; at the end the
 * Status goes on the error channel and the socket closes normally, which the client reads
 * as the end of every stream. Either side going away ends the other. Resolves when both
 * are over.
 */
export function bridgeRemoteCommand(ws: WebSocket, stream: PodStream): Promise<PodStreamOutcome> {
  const closeSignals = ws.protocol === 'v5.channel.k8s.io';
  return new Promise((resolve) => {
    let outcome: PodStreamOutcome = { kind: 'cancelled' };
    ws.on('message', (message: Buffer, isBinary: boolean) => {
      if (!isBinary || message.length === 0) return;
      const channel = message[0];
      const payload = message.subarray(1);
      if (channel === CHANNEL.stdin) {
        if (!stream.stdin(payload)) ws.pause();
      } else if (channel === CHANNEL.resize) {
        const size = parseTerminalSize(payload);
        if (size) stream.resize(size.width, size.height);
      } else if (channel === CHANNEL.close && closeSignals && payload[0] === CHANNEL.stdin) {
        stream.closeStdin();
      }
    });
    ws.on('error', () => undefined);
    ws.on('close', () => {
      stream.cancel();
      resolve(outcome);
    });
    stream.attach({
      output: (channel, data) => {
        ws.send(Buffer.concat([Buffer.of(channel), data]), (error) => {
          if (!error) stream.outputTaken();
        });
      },
      drain: () => ws.resume(),
      end: (end) => {
        outcome = end;
        const status = endStatus(end);
        if (status && ws.readyState === ws.OPEN) ws.send(Buffer.concat([Buffer.of(CHANNEL.error), Buffer.from(JSON.stringify(status))]));
        ws.close(1000);
      },
    });
  });
}
