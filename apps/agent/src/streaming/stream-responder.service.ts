import { Inject, Injectable, Logger, type OnModuleDestroy } from '@nestjs/common';
import { Observable } from 'rxjs';
import type { RawMessage } from '#bus';
import { ContractValidationError, encodeStreamFrame, parseContract, PodStreamRequest } from '#contracts';
import { podRef } from '#observability';
import { RuntimeError } from '#runtime';
import { AGENT_CONFIG } from '../agent.constants.js';
import type { AgentConfig } from '../agent.config.js';
import { AgentMetrics } from '../agent.metrics.js';
import { ContainerStreams } from './container-streams.service.js';
import type { StreamInput } from './stream-input.pipe.js';
import { StreamRequestError } from './stream-request.error.js';
import { StreamSession } from './stream-session.js';

/**
 * Serves exec, attach and port-forward streams to the API over core NATS (the protocol is
 * described at POD_STREAM in libs/contracts; StreamsController takes the requests and the
 * input frames): this agent is the only responder on its node's request subject, so the API
 * never needs to reach the node. Every request is validated at this boundary; a bad one is
 * answered with an error frame, never thrown.
 */
@Injectable()
export class StreamResponder implements OnModuleDestroy {
  private readonly logger = new Logger(StreamResponder.name);
  private readonly sessions = new Map<string, StreamSession>();
  private readonly serving = new Set<Promise<void>>();

  constructor(
    @Inject(AGENT_CONFIG) private readonly config: AgentConfig,
    private readonly streams: ContainerStreams,
    private readonly metrics: AgentMetrics,
  ) {}

  async onModuleDestroy(): Promise<void> {
    for (const session of this.sessions.values()) session.stop('stopped');
    await Promise.all(this.serving);
  }

  /** Streams being served now. */
  get open(): number {
    return this.sessions.size;
  }

  /** The frames answering one stream request, in order, ending after the stream's last frame. */
  serve(request: RawMessage): Observable<Buffer> {
    return new Observable<Buffer>((subscriber) => {
      const work = this.run(request, (frame) => subscriber.next(frame)).finally(() => subscriber.complete());
      this.serving.add(work);
      void work.finally(() => this.serving.delete(work));
    });
  }

  /** A frame from the API for one of this node's streams (decoded by the StreamInputPipe). */
  input({ streamId, frame }: StreamInput): void {
    // Input for a stream that ended (or never was) needs no answer: the API's own timeout covers it.
    this.sessions.get(streamId)?.input(frame);
  }

  private async run(message: RawMessage, send: (frame: Buffer) => void): Promise<void> {
    const refuse = (code: number, reason: string, text: string): void => send(encodeStreamFrame('error', 0, { code, reason, message: text }));
    let request: PodStreamRequest;
    try {
      const plain = message.json();
      if (plain === undefined) throw new ContractValidationError('PodStreamRequest', [{ field: '', reason: 'FieldValueInvalid', message: 'not JSON' }]);
      request = parseContract(PodStreamRequest, plain, 'PodStreamRequest');
    } catch (error) {
      const text = error instanceof ContractValidationError ? error.message : 'invalid PodStreamRequest: not JSON';
      this.logger.warn(`stream request on ${this.config.NODE_NAME} rejected: ${text}`);
      refuse(400, 'BadRequest', text);
      return;
    }
    const { streamId, kind } = request;
    if (this.sessions.has(streamId)) {
      refuse(400, 'BadRequest', `stream ${streamId} is already open`);
      return;
    }
    // Registered before anything is awaited, so no input frame finds the stream missing once `start` is out.
    const session = new StreamSession(send);
    this.sessions.set(streamId, session);
    this.metrics.podStreams.inc({ kind });
    const what = `${kind} stream ${streamId} of ${podRef(request)}${request.container ? ` container ${request.container}` : ''}`;
    try {
      let process;
      try {
        process = await this.streams.open(request);
      } catch (error) {
        const failure = toRequestError(error);
        if (failure.code >= 500) this.logger.warn(`${what}: ${failure.message}`);
        refuse(failure.code, failure.reason, failure.message);
        return;
      }
      const result = await session.run(process);
      if (result.outcome === 'failed') this.logger.warn(`${what} failed after ${result.frames} frame(s): ${result.error ?? ''}`);
      else this.logger.debug(`${what} ${result.outcome} after ${result.frames} frame(s)`);
    } finally {
      this.sessions.delete(streamId);
      this.metrics.podStreams.dec({ kind });
    }
  }
}

function toRequestError(error: unknown): StreamRequestError {
  if (error instanceof StreamRequestError) return error;
  if (error instanceof RuntimeError && error.statusCode === 501) return new StreamRequestError(501, 'NotImplemented', error.message, { cause: error });
  // The container stopped between the status and the call: the client asked for something not running.
  if (error instanceof RuntimeError && (error.statusCode === 409 || error.statusCode === 404)) {
    return new StreamRequestError(400, 'BadRequest', error.message, { cause: error });
  }
  return new StreamRequestError(500, 'InternalError', (error as Error).message, { cause: error });
}
