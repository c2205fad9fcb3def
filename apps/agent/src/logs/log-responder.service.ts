import { Inject, Injectable, Logger, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import type { Msg, Subscription as NatsSubscription } from '@nats-io/transport-node';
import { isUUID } from 'class-validator';
import { BUS, type Bus } from '#bus';
import { ContractValidationError, LogRequest, LogStreamControl, parseContract, SUBJECTS } from '#contracts';
import { podRef } from '#observability';
import { AGENT_CONFIG } from '../agent.constants.js';
import type { AgentConfig } from '../agent.config.js';
import { agentMetrics } from '../agent.metrics.js';
import { ContainerLogs } from './container-logs.service.js';
import { LogRequestError } from './log-request.error.js';
import { LogSession, type LogSessionMessage } from './log-session.js';

const NIL_UUID = '00000000-0000-0000-0000-000000000000';

function decode(msg: Msg): unknown {
  try {
    return msg.json();
  } catch {
    return undefined;
  }
}

/** The stream id of a request that failed validation, if it has a usable one. */
function streamIdOf(raw: unknown): string {
  const id = (raw as { streamId?: unknown } | undefined)?.streamId;
  return typeof id === 'string' && isUUID(id) ? id : NIL_UUID;
}

/**
 * Serves container logs to the API over core NATS request/reply (the protocol is described
 * at LOG_STREAM in libs/contracts): this agent is the only responder on its node's request
 * subject, so the API never needs to reach the node's port. Every request is validated at
 * this boundary; a bad one is answered with an error, never thrown.
 */
@Injectable()
export class LogResponder implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger(LogResponder.name);
  private readonly sessions = new Map<string, LogSession>();
  private readonly serving = new Set<Promise<void>>();
  private subscriptions: NatsSubscription[] = [];

  constructor(
    @Inject(AGENT_CONFIG) private readonly config: AgentConfig,
    @Inject(BUS) private readonly bus: Bus,
    private readonly logs: ContainerLogs,
  ) {}

  async onModuleInit(): Promise<void> {
    const nc = this.bus.nc;
    const node = this.config.NODE_NAME;
    this.subscriptions = [
      nc.subscribe(SUBJECTS.logRequests(node), {
        callback: (error, msg) => {
          if (error) this.logger.warn(`log request subscription: ${error.message}`);
          else this.track(this.serve(msg));
        },
      }),
      nc.subscribe(SUBJECTS.nodeLogStreamControl(node), {
        callback: (error, msg) => {
          if (!error) this.control(msg);
        },
      }),
    ];
    // The subscriptions are in place on the server before the agent says it is up.
    await nc.flush();
  }

  async onModuleDestroy(): Promise<void> {
    for (const subscription of this.subscriptions) subscription.unsubscribe();
    for (const session of this.sessions.values()) session.stop('stopped');
    await Promise.all(this.serving);
  }

  private track(work: Promise<void>): void {
    this.serving.add(work);
    void work.finally(() => this.serving.delete(work));
  }

  private async serve(msg: Msg): Promise<void> {
    const reply = msg.reply;
    if (!reply) {
      this.logger.warn(`log request on ${msg.subject} without a reply subject dropped`);
      return;
    }
    const raw = decode(msg);
    const answer = (streamId: string, message: LogSessionMessage): void => {
      this.bus.nc.publish(reply, JSON.stringify({ version: 1, streamId, ...message }));
    };
    let request: LogRequest;
    try {
      request = parseContract(LogRequest, raw, 'LogRequest');
    } catch (error) {
      const message = error instanceof ContractValidationError ? error.message : 'invalid LogRequest: not JSON';
      this.logger.warn(`log request rejected: ${message}`);
      this.tryAnswer(() => answer(streamIdOf(raw), { kind: 'error', seq: 0, error: { code: 400, reason: 'BadRequest', message } }));
      return;
    }
    const { streamId } = request;
    if (this.sessions.has(streamId)) {
      this.tryAnswer(() =>
        answer(streamId, { kind: 'error', seq: 0, error: { code: 400, reason: 'BadRequest', message: `log stream ${streamId} is already open` } }),
      );
      return;
    }
    let containerId: string;
    try {
      containerId = await this.logs.resolve(request, request);
    } catch (error) {
      const failure = error instanceof LogRequestError ? error : new LogRequestError(500, 'InternalError', (error as Error).message, { cause: error });
      if (failure.code === 500) this.logger.warn(`log of ${podRef(request)}: ${failure.message}`);
      this.tryAnswer(() => answer(streamId, { kind: 'error', seq: 0, error: { code: failure.code, reason: failure.reason, message: failure.message } }));
      return;
    }
    const session = new LogSession((message) => answer(streamId, message));
    this.sessions.set(streamId, session);
    agentMetrics.logStreams.inc({ via: 'nats' });
    try {
      const result = await session.run((signal) => this.logs.stream(containerId, request, signal));
      const what = `log stream ${streamId} of ${podRef(request)} container ${containerId.slice(0, 12)}${request.follow ? ' (follow)' : ''}`;
      if (result.outcome === 'failed') this.logger.warn(`${what} failed after ${result.chunks} chunk(s): ${result.error ?? ''}`);
      else this.logger.debug(`${what} ${result.outcome} after ${result.chunks} chunk(s)`);
    } finally {
      this.sessions.delete(streamId);
      agentMetrics.logStreams.dec({ via: 'nats' });
    }
  }

  private control(msg: Msg): void {
    let control: LogStreamControl;
    try {
      control = parseContract(LogStreamControl, decode(msg), 'LogStreamControl');
    } catch (error) {
      this.logger.warn(`log stream control on ${msg.subject} ignored: ${(error as Error).message}`);
      return;
    }
    // A control for a stream that ended (or never was) needs no answer: the API's own timeout covers it.
    this.sessions.get(control.streamId)?.control(control);
  }

  /** Publishing fails only when the connection is closing; then there is nobody to answer. */
  private tryAnswer(send: () => void): void {
    try {
      send();
    } catch (error) {
      this.logger.debug(`log answer not sent: ${(error as Error).message}`);
    }
  }
}
