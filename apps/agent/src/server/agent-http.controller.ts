import { Controller, Get, Header, Inject, Logger, Param, Query, Res, UseGuards } from '@nestjs/common';
import type { Response } from 'express';
import { BUS, type Bus } from '#bus';
import { ContractValidationError, parsePodLogQuery, PodLogQueryError, type Pod, type PodLogOptions } from '#contracts';
import { goDuration } from '#domain/backoff';
import { metricsRegistry } from '#observability';
import { LABELS, type ContainerRuntime } from '#runtime';
import { AGENT_CONFIG, RUNTIME } from '../agent.constants.js';
import type { AgentConfig } from '../agent.config.js';
import { AgentMetrics } from '../agent.metrics.js';
import { DesiredStateService } from '../config/desired-state.service.js';
import { ContainerLogs } from '../logs/container-logs.service.js';
import { LogRequestError } from '../logs/log-request.error.js';
import { PlegHealth } from '../pleg/pleg-health.js';
import { ReconcilerService } from '../kubelet/reconciler.service.js';
import { StatusReporter } from '../status/status-reporter.service.js';
import { AgentTokenGuard, OpenWithoutToken, Public } from './agent-token.guard.js';
import { compareText } from '#domain/compare-text';

/** A list of pods as the kubelet's /pods and /runningpods answer it. */
interface PodList<T> {
  kind: 'PodList';
  apiVersion: 'v1';
  metadata: Record<string, never>;
  items: T[];
}

/** A pod of /runningpods: what the runtime shows, not the spec (the kubelet's runtime pod as an API pod). */
interface RunningPod {
  metadata: { name: string; namespace: string; uid: string };
  spec: { containers: Array<{ name: string; image: string }> };
  status: Record<string, never>;
}

interface HealthCheck {
  name: string;
  ok: boolean;
  detail: string;
}

const ago = (ms: number): string => (ms < 10_000 ? `${(ms / 1000).toFixed(1)}s` : goDuration(ms));

/**
 * The agent's own HTTP surface, as the kubelet's: /healthz (open); behind the bearer token
 * /metrics (open while no AGENT_TOKEN is set), /pods, /runningpods and /containerLogs (closed
 * to everyone while no AGENT_TOKEN is set).
 */
@Controller()
@UseGuards(AgentTokenGuard)
export class AgentHttpController {
  private readonly logger = new Logger(AgentHttpController.name);

  constructor(
    @Inject(AGENT_CONFIG) private readonly config: AgentConfig,
    @Inject(RUNTIME) private readonly runtime: ContainerRuntime,
    private readonly reconciler: ReconcilerService,
    private readonly desired: DesiredStateService,
    private readonly status: StatusReporter,
    private readonly logs: ContainerLogs,
    @Inject(BUS) private readonly bus: Bus,
    private readonly agentMetrics: AgentMetrics,
    private readonly pleg: PlegHealth,
  ) {}

  /**
   * 500 when the sync loop has not completed a pass for three resync periods, or the PLEG
   * is unhealthy (no relist for three minutes, or the runtime event stream down); 503 when
   * only the bus is unreachable (the pods run on, nothing new can arrive). The body says
   * which, and with `?verbose` the details of a healthy agent too.
   */
  @Public()
  @Get('healthz')
  healthz(@Query('verbose') verbose: string | undefined, @Res() res: Response): void {
    const checks = this.checks(Date.now());
    const healthy = checks.every((c) => c.ok);
    const onlyBus = checks.every((c) => c.ok || c.name === 'bus');
    res.status(healthy ? 200 : onlyBus ? 503 : 500).type('text/plain');
    if (healthy && verbose === undefined) {
      res.send('ok');
      return;
    }
    const lines = checks.map((c) => `[${c.ok ? '+' : '-'}]${c.name} ${c.ok ? 'ok' : 'failed'}: ${c.detail}`);
    res.send(`${[...lines, `healthz check ${healthy ? 'passed' : 'failed'}`].join('\n')}\n`);
  }

  @OpenWithoutToken()
  @Get('metrics')
  @Header('Content-Type', metricsRegistry.contentType)
  async metrics(): Promise<string> {
    return this.agentMetrics.exposition();
  }

  /** The pods this agent runs (its desired set), each with the status it last computed. */
  @Get('pods')
  pods(): PodList<Pod> {
    const items = this.desired.list().map((pod): Pod => ({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { ...pod.manifest.metadata, namespace: pod.namespace, uid: pod.uid },
      spec: pod.manifest.spec,
      status: this.status.previous(pod.uid) ?? { phase: 'Pending' },
    }));
    return { kind: 'PodList', apiVersion: 'v1', metadata: {}, items: items.sort((a, b) => compareText(podKey(a.metadata), podKey(b.metadata))) };
  }

  /** Pods with running containers, as the runtime shows them: name, namespace, uid, and each running container's name and image. */
  @Get('runningpods')
  async runningPods(): Promise<PodList<RunningPod>> {
    const observed = await this.runtime.listContainers({ [LABELS.node]: this.config.NODE_NAME });
    const byUid = new Map<string, RunningPod>();
    for (const c of observed) {
      const uid = c.labels[LABELS.podUid];
      if (c.state !== 'running' || c.labels[LABELS.kind] !== 'container' || !uid) continue;
      let pod = byUid.get(uid);
      if (!pod) {
        pod = { metadata: { name: c.labels[LABELS.podName] ?? '', namespace: c.labels[LABELS.podNamespace] ?? '', uid }, spec: { containers: [] }, status: {} };
        byUid.set(uid, pod);
      }
      pod.spec.containers.push({ name: c.labels[LABELS.containerName] ?? '', image: c.image });
    }
    const items = [...byUid.values()].sort((a, b) => compareText(podKey(a.metadata), podKey(b.metadata)));
    for (const pod of items) pod.spec.containers.sort((a, b) => compareText(a.name, b.name));
    return { kind: 'PodList', apiVersion: 'v1', metadata: {}, items };
  }

  /** One container's log, served locally with the API's query parameters; errors as plain text, as the kubelet's. */
  @Get('containerLogs/:namespace/:pod/:container')
  async containerLogs(
    @Param('namespace') namespace: string,
    @Param('pod') name: string,
    @Param('container') container: string,
    @Query() query: Record<string, unknown>,
    @Res() res: Response,
  ): Promise<void> {
    let options: PodLogOptions;
    let containerId: string;
    try {
      options = parsePodLogQuery({ ...query, container });
      containerId = await this.logs.resolve({ namespace, name }, options);
    } catch (error) {
      const code = error instanceof LogRequestError ? error.code : error instanceof PodLogQueryError || error instanceof ContractValidationError ? 400 : 500;
      if (code === 500) this.logger.warn(`log of ${namespace}/${name} container ${container}: ${(error as Error).message}`);
      res
        .status(code)
        .type('text/plain')
        .send(`${(error as Error).message}\n`);
      return;
    }
    const abort = new AbortController();
    const clientGone = (): void => {
      if (!res.writableFinished) abort.abort();
    };
    res.on('close', clientGone);
    if (res.destroyed) abort.abort();
    res.status(200).type('text/plain');
    res.flushHeaders();
    this.agentMetrics.logStreams.inc({ via: 'http' });
    try {
      for await (const chunk of this.logs.stream(containerId, options, abort.signal)) {
        if (!res.write(chunk)) await drained(res);
        if (abort.signal.aborted) break;
      }
    } catch (error) {
      this.logger.warn(`log of ${namespace}/${name} container ${container} broke off: ${(error as Error).message}`);
    } finally {
      this.agentMetrics.logStreams.dec({ via: 'http' });
      res.off('close', clientGone);
      if (!res.destroyed) res.end();
    }
  }

  private checks(nowMs: number): HealthCheck[] {
    const pleg = this.pleg.snapshot();
    const stallMs = this.config.RESYNC_SECONDS * 3000;
    const sinceSync = nowMs - (this.reconciler.lastPassMs || pleg.startedMs);
    const syncloop: HealthCheck = {
      name: 'syncloop',
      ok: sinceSync <= stallMs,
      detail: sinceSync <= stallMs ? `last pass ${ago(sinceSync)} ago` : `sync loop stalled: last pass ${Math.round(sinceSync / 1000)}s ago`,
    };
    const problem = this.pleg.problem();
    const stream = pleg.eventStream;
    const relisted = pleg.lastRelistMs === undefined ? 'no relist yet' : `last relist ${ago(nowMs - pleg.lastRelistMs)} ago`;
    const streamState = `event stream ${stream.connected ? 'connected' : 'disconnected'} for ${ago(nowMs - stream.sinceMs)}`;
    return [
      { name: 'ping', ok: true, detail: 'pong' },
      syncloop,
      { name: 'pleg', ok: problem === undefined, detail: problem ?? `${relisted}, ${streamState}` },
      {
        name: 'bus',
        ok: this.bus.connected,
        detail: this.bus.connected
          ? `connected to NATS; ${this.bus.outbox.size} message(s) in the outbox`
          : `NATS unreachable for ${ago(nowMs - (this.bus.disconnectedSinceMs ?? nowMs))}, reconnecting; ${this.bus.outbox.size} message(s) waiting in the outbox`,
      },
    ];
  }
}

function podKey(meta: { namespace?: string; name: string }): string {
  return `${meta.namespace ?? ''}/${meta.name}`;
}

/** Resolves when the response can take more, or is gone; leaves no listener behind. */
function drained(res: Response): Promise<void> {
  if (res.destroyed) return Promise.resolve();
  return new Promise((resolve) => {
    const done = (): void => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });
}
