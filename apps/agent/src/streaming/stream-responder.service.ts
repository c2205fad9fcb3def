import { Inject, Injectable, Logger, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import type { Msg, Subscription as NatsSubscription } from '@nats-io/transport-node';
import { BUS, type Bus } from '#bus';
import { ContractValidationError, decodeStreamFrame, encodeStreamFrame, parseContract, PodStreamRequest, SUBJECTS } from '#contracts';
import { podRef } from '#observability';
import { RuntimeError } from '#runtime';
import { AGENT_CONFIG } from '../agent.constants.js';
import type { AgentConfig } from '../agent.config.js';
import { AgentMetrics } from '../agent.metrics.js';
import { ContainerStreams } from './container-streams.service.js';
import { StreamRequestError } from './stream-request.error.js';
import { StreamSession } from './stream-session.js';

/** The stream id out of an input subject (`...input.<streamId>`); uuids are their own subject token. */
const streamIdOfSubject = (subject: string): string => subject.slice(subject.lastIndexOf('.') + 1);

/**
 * Serves exec, attach and port-forward streams to the API over core NATS (the protocol is
 * described at POD_STREAM in libs/contracts): this agent is the only responder on its
 * node's request subject, so the API never needs to reach the node. Every request and
 * frame is validated at this boundary; a bad one is answered or dropped, never thrown.
 */
@Injectable()
export class StreamResponder implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger(StreamResponder.name);
  private readonly sessions = new Map<string, StreamSession>();
  private readonly serving = new Set<Promise<void>>();
  private subscriptions: NatsSubscription[] = [];

  constructor(
    @Inject(AGENT_CONFIG) private readonly config: AgentConfig,
    @Inject(BUS) private readonly bus: Bus,
    private readonly streams: ContainerStreams,
    private readonly metrics: AgentMetrics,
  ) {}

  async onModuleInit(): Promise<void> {
    const nc = this.bus.nc;
    const node = this.config.NODE_NAME;
    this.subscriptions = [
      nc.subscribe(SUBJECTS.streamRequests(node), {
        callback: (error, msg) => {
          if (error) this.logger.warn(`stream request subscription: ${error.message}`);
          else this.track(this.serve(msg));
        },
      }),
      nc.subscribe(SUBJECTS.nodeStreamInput(node), {
        callback: (error, msg) => {
          if (!error) this.input(msg);
        },
      }),
    ];
    await nc.flush();
  }

  async onModuleDestroy(): Promise<void> {
    for (const subscription of this.subscriptions) subscription.unsubscribe();
    for (const session of this.sessions.values()) session.stop('stopped');
    await Promise.all(this.serving);
  }

  /** Streams being served now. */
  get open(): number {
    return this.sessions.size;
  }

  private track(work: Promise<void>): void {
    this.serving.add(work);
    void work.finally(() => this.serving.delete(work));
  }

  private async serve(msg: Msg): Promise<void> {
    const reply = msg.reply;
    if (!reply) {
      this.logger.warn(`stream request on ${msg.subject} without a reply subject dropped`);
      return;
    }
    const send = (frame: Buffer): void => this.bus.nc.publish(reply, frame);
    const refuse = (code: number, reason: string, message: string): void => {
      try {
        send(encodeStreamFrame('error', 0, { code, reason, message }));
      } catch (error) {
        this.logger.debug(`stream answer not sent: ${(error as Error).message}`);
      }
    };
    let request: PodStreamRequest;
    try {
      request = parseContract(PodStreamRequest, JSON.parse(msg.string()), 'PodStreamRequest');
    } catch (error) {
      const message = error instanceof ContractValidationError ? error.message : 'invalid PodStreamRequest: not JSON';
      this.logger.warn(`stream request rejected: ${message}`);
      refuse(400, 'BadRequest', message);
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

  private input(msg: Msg): void {
    const session = this.sessions.get(streamIdOfSubject(msg.subject));
    // Input for a stream that ended (or never was) needs no answer: the API's own timeout covers it.
    if (!session) return;
    try {
      session.input(decodeStreamFrame(msg.data));
    } catch (error) {
      this.logger.warn(`stream input on ${msg.subject} ignored: ${(error as Error).message}`);
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
