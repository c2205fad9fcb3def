import { ConfigSource } from './configmap/config-source.service.js';
import { HostMounts } from './volumemanager/host-mounts.js';
import { VolumeManager } from './volumemanager/volume-manager.service.js';
import { Module, type DynamicModule } from '@nestjs/common';
import { BusModule } from '#bus';
import { DockerRuntime, FakeRuntime, type ContainerRuntime } from '#runtime';
import { AGENT_CONFIG, RUNTIME } from './agent.constants.js';
import { AgentConfig } from './agent.config.js';
import { AgentMetrics } from './agent.metrics.js';
import { AssignmentsController } from './config/assignments.controller.js';
import { DesiredStateService } from './config/desired-state.service.js';
import { EventRecorder } from './events/event-recorder.service.js';
import { EVICTION_SIGNAL_READER, EVICTION_STORAGE_READER } from './eviction/eviction.constants.js';
import { EnginePodStorageReader } from './eviction/pod-storage.reader.js';
import { ImageGcManager } from './images/image-gc-manager.service.js';
import { EvictionManager, MachineSignalReader } from './eviction/eviction-manager.service.js';
import { HandlerRunner } from './lifecycle/handler-runner.js';
import { PodAdmission } from './lifecycle/pod-admission.js';
import { TerminationMessages } from './lifecycle/termination-messages.js';
import { ProberService } from './prober/prober.service.js';
import { StaticPodSource } from './config/static-pod-source.service.js';
import { AgentHttpController } from './server/agent-http.controller.js';
import { ContainerLogs } from './logs/container-logs.service.js';
import { LogResponder } from './logs/log-responder.service.js';
import { LogsController } from './logs/logs.controller.js';
import { MirrorControlController } from './config/mirror-control.controller.js';
import { PodStartTracker } from './status/pod-start-tracker.js';
import { NodeService } from './node/node.service.js';
import { PlegHealth } from './pleg/pleg-health.js';
import { PlegService } from './pleg/pleg.service.js';
import { PodExecutor } from './pod-workers/pod-executor.js';
import { ReconcilerService } from './kubelet/reconciler.service.js';
import { StatusReporter } from './status/status-reporter.service.js';
import { StatsCollector } from './stats/stats-collector.service.js';
import { StatsController } from './stats/stats.controller.js';
import { StatsRequestsController } from './stats/stats-requests.controller.js';
import { ContainerStreams } from './streaming/container-streams.service.js';
import { PodPortDialer } from './streaming/pod-port-dialer.js';
import { StreamResponder } from './streaming/stream-responder.service.js';
import { StreamsController } from './streaming/streams.controller.js';

/** The runtime the config names: the Docker engine, or the in-memory one of a hollow node. */
function createRuntime(config: AgentConfig, nodeIndex: number): ContainerRuntime {
  return config.RUNTIME === 'fake' ? new FakeRuntime({ nodeIndex }) : new DockerRuntime();
}

/**
 * One node's agent. A dynamic module over an already validated config, so one process can
 * host many agents (hollow nodes), each in an application context of its own.
 */
@Module({})
export class AgentModule {
  /** `nodeIndex` picks a hollow node's block of fake pod IPs; a Docker node ignores it. */
  static forConfig(config: AgentConfig, nodeIndex = 0): DynamicModule {
    return {
      module: AgentModule,
      imports: [
        BusModule.forRoot(
          () => ({
            servers: config.NATS_URL,
            streamReplicas: config.STREAM_REPLICAS,
            name: `jetlet-agent-${config.NODE_NAME}`,
            source: { component: 'agent', node: config.NODE_NAME },
            credentials: { identity: { kind: 'node', node: config.NODE_NAME }, seedFile: config.NATS_NKEY_SEED_FILE },
          }),
          () => ({ node: config.NODE_NAME, config: { ...config } }),
        ),
      ],
      controllers: [AgentHttpController, AssignmentsController, LogsController, MirrorControlController, StatsController, StatsRequestsController, StreamsController],
      providers: [
        { provide: AGENT_CONFIG, useValue: config },
        { provide: RUNTIME, useFactory: () => createRuntime(config, nodeIndex) },
        // Per agent, not per process: hollow nodes run many agents side by side.
        { provide: AgentMetrics, useFactory: () => new AgentMetrics() },
        { provide: PlegHealth, useFactory: (metrics: AgentMetrics) => new PlegHealth(metrics), inject: [AgentMetrics] },
        DesiredStateService,
        { provide: EVICTION_SIGNAL_READER, useFactory: () => new MachineSignalReader(config.AGENT_ROOT_DIR, config.IMAGEFS_PATH) },
        {
          provide: EVICTION_STORAGE_READER,
          useFactory: (runtime: ContainerRuntime) => new EnginePodStorageReader(runtime, config.NODE_NAME, config.AGENT_ROOT_DIR),
          inject: [RUNTIME],
        },
        ImageGcManager,
        EvictionManager,
        NodeService,
        StatusReporter,
        EventRecorder,
        HandlerRunner,
        TerminationMessages,
        PodAdmission,
        ProberService,
        StaticPodSource,
        PodExecutor,
        ConfigSource,
        HostMounts,
        VolumeManager,
        ReconcilerService,
        PlegService,
        {
          provide: PodStartTracker,
          useFactory: (metrics: AgentMetrics) => new PodStartTracker((s) => metrics.podStartDuration.observe(s)),
          inject: [AgentMetrics],
        },
        ContainerLogs,
        LogResponder,
        ContainerStreams,
        PodPortDialer,
        StreamResponder,
        StatsCollector,
      ],
    };
  }
}
