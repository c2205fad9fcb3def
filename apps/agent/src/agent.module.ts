import { Module, type DynamicModule } from '@nestjs/common';
import { BusModule, busTls, type Bus } from '#bus';
import type { Identity } from '#contracts';
import { AgentCoreModule, type AgentMetricsScope } from './agent-core.module.js';
import type { AgentConfig } from './agent.config.js';
import { ConfigModule } from './config/config.module.js';
import { ConfigMapModule } from './configmap/configmap.module.js';
import { EventsModule } from './events/events.module.js';
import { EvictionModule } from './eviction/eviction.module.js';
import { ImagesModule } from './images/images.module.js';
import { KubeletModule } from './kubelet/kubelet.module.js';
import { LifecycleModule } from './lifecycle/lifecycle.module.js';
import { LogsModule } from './logs/logs.module.js';
import { NodeModule } from './node/node.module.js';
import { PlegModule } from './pleg/pleg.module.js';
import { PodWorkersModule } from './pod-workers/pod-workers.module.js';
import { ProberModule } from './prober/prober.module.js';
import { ServerModule } from './server/server.module.js';
import { StatsModule } from './stats/stats.module.js';
import { StatusModule } from './status/status.module.js';
import { StreamingModule } from './streaming/streaming.module.js';
import { VolumeManagerModule } from './volumemanager/volumemanager.module.js';

/**
 * One node's agent: the bus, the parts every folder shares (AgentCoreModule), and one module
 * per folder, named as the kubelet names its packages. A dynamic module over an already
 * validated config, so one process can host many agents (hollow nodes), each in an
 * application of its own with its own instances of every part.
 */
@Module({})
export class AgentModule {
  /**
   * `nodeIndex` picks a hollow node's block of fake pod IPs; a Docker node ignores it.
   * `identity` is the NATS identity of NATS_NKEY_SEED_FILE: the node's own, or its hollow process's.
   * `connection`: a hollow process's Bus, whose connection this agent rides instead of opening its own.
   * `metrics`: `process` puts this agent's series in the families a hollow process's agents share, labelled by node.
   */
  static forConfig(
    config: AgentConfig,
    nodeIndex = 0,
    identity: Identity = { kind: 'node', node: config.NODE_NAME },
    connection?: Bus,
    metrics: AgentMetricsScope = 'own',
  ): DynamicModule {
    return {
      module: AgentModule,
      imports: [
        BusModule.forRoot(
          () => ({
            servers: config.NATS_URL,
            streamReplicas: config.STREAM_REPLICAS,
            name: `jetlet-agent-${config.NODE_NAME}`,
            source: { component: 'agent', node: config.NODE_NAME },
            credentials: { identity, seedFile: config.NATS_NKEY_SEED_FILE },
            tls: busTls(config),
            ...(connection ? { shareConnectionOf: connection } : {}),
          }),
          // The node's registration asks its engine while the server opens the consumer of its
          // assignments: the reconciler and the first heartbeat wait for those themselves.
          () => ({ node: config.NODE_NAME, config: { ...config }, catchUpBeforeBootstrap: false }),
        ),
        AgentCoreModule.forConfig(config, nodeIndex, metrics),
        ConfigModule,
        ConfigMapModule,
        EventsModule,
        StatusModule,
        NodeModule,
        LifecycleModule,
        VolumeManagerModule,
        ImagesModule,
        EvictionModule,
        PodWorkersModule,
        ProberModule,
        KubeletModule,
        PlegModule,
        StatsModule,
        LogsModule,
        StreamingModule,
        ServerModule,
      ],
    };
  }
}
