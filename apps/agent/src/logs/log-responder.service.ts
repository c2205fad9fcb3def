import { Injectable, Logger, type OnModuleDestroy } from '@nestjs/common';
import { isUUID } from '#contracts/class-validator';
import { Observable } from 'rxjs';
import type { RawMessage } from '#bus';
import { ContractValidationError, LogRequest, parseContract, type LogStreamControl } from '#contracts';
import { podRef } from '#observability';
import { AgentMetrics } from '../agent.metrics.js';
import { ContainerLogs } from './container-logs.service.js';
import { LogRequestError } from './log-request.error.js';
import { LogSession, type LogSessionMessage } from './log-session.js';

const NIL_UUID = '00000000-0000-0000-0000-000000000000';

/** One message of a log stream, as the agent sends it to the API's reply subject. */
export type LogAnswer = { version: 1; streamId: string } & LogSessionMessage;

/** The stream id of a request that failed validation, if it has a usable one. */
function streamIdOf(raw: unknown): string {
  const id = (raw as { streamId?: unknown } | undefined)?.streamId;
  return typeof id === 'string' && isUUID(id) ? id : NIL_UUID;
}

/**
 * Serves container logs to the API over core NATS request/reply (the protocol is described
 * at LOG_STREAM in libs/contracts; LogsController takes the requests): this agent is the
 * only responder on its node's request subject, so the API never needs to reach the node's
 * port. Every request is validated at this boundary; a bad one is answered with an error,
 * never thrown.
 */
@Injectable()
export class LogResponder implements OnModuleDestroy {
  private readonly logger = new Logger(LogResponder.name);
  private readonly sessions = new Map<string, LogSession>();
  private readonly serving = new Set<Promise<void>>();

  constructor(
    private readonly logs: ContainerLogs,
    private readonly metrics: AgentMetrics,
  ) {}

  async onModuleDestroy(): Promise<void> {
    for (const session of this.sessions.values()) session.stop('stopped');
    await Promise.all(this.serving);
  }

  /** The answers to one log request, in order, ending after the stream's last message. */
  serve(request: RawMessage): Observable<LogAnswer> {
    return new Observable<LogAnswer>((subscriber) => {
      const work = this.run(request.json(), (streamId, message) => subscriber.next({ version: 1, streamId, ...message })).finally(() => subscriber.complete());
      this.serving.add(work);
      void work.finally(() => this.serving.delete(work));
    });
  }

  private async run(raw: unknown, answer: (streamId: string, message: LogSessionMessage) => void): Promise<void> {
    let request: LogRequest;
    try {
      request = parseContract(LogRequest, raw, 'LogRequest');
    } catch (error) {
      const message = error instanceof ContractValidationError ? error.message : 'invalid LogRequest: not JSON';
      this.logger.warn(`log request rejected: ${message}`);
      answer(streamIdOf(raw), { kind: 'error', seq: 0, error: { code: 400, reason: 'BadRequest', message } });
      return;
    }
    const { streamId } = request;
    if (this.sessions.has(streamId)) {
      answer(streamId, { kind: 'error', seq: 0, error: { code: 400, reason: 'BadRequest', message: `log stream ${streamId} is already open` } });
      return;
    }
    let containerId: string;
    try {
      containerId = await this.logs.resolve(request, request);
    } catch (error) {
      const failure = error instanceof LogRequestError ? error : new LogRequestError(500, 'InternalError', (error as Error).message, { cause: error });
      if (failure.code === 500) this.logger.warn(`log of ${podRef(request)}: ${failure.message}`);
      answer(streamId, { kind: 'error', seq: 0, error: { code: failure.code, reason: failure.reason, message: failure.message } });
      return;
    }
    const session = new LogSession((message) => answer(streamId, message));
    this.sessions.set(streamId, session);
    this.metrics.logStreams.inc({ via: 'nats' });
    try {
      const result = await session.run((signal) => this.logs.stream(containerId, request, signal));
      const what = `log stream ${streamId} of ${podRef(request)} container ${containerId.slice(0, 12)}${request.follow ? ' (follow)' : ''}`;
      if (result.outcome === 'failed') this.logger.warn(`${what} failed after ${result.chunks} chunk(s): ${result.error ?? ''}`);
      else this.logger.debug(`${what} ${result.outcome} after ${result.chunks} chunk(s)`);
    } finally {
      this.sessions.delete(streamId);
      this.metrics.logStreams.dec({ via: 'nats' });
    }
  }

  /** An ack or cancel from the API for one of this node's log streams (validated by the ContractPipe). */
  control(control: LogStreamControl): void {
    // A control for a stream that ended (or never was) needs no answer: the API's own timeout covers it.
    this.sessions.get(control.streamId)?.control(control);
  }
}
