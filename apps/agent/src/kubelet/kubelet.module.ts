import { Module } from '@nestjs/common';
import { ConfigModule } from '../config/config.module.js';
import { EventsModule } from '../events/events.module.js';
import { EvictionModule } from '../eviction/eviction.module.js';
import { LifecycleModule } from '../lifecycle/lifecycle.module.js';
import { NodeModule } from '../node/node.module.js';
import { PodWorkersModule } from '../pod-workers/pod-workers.module.js';
import { ProberModule } from '../prober/prober.module.js';
import { StatusModule } from '../status/status.module.js';
import { VolumeManagerModule } from '../volumemanager/volumemanager.module.js';
import { ReconcilerService } from './reconciler.service.js';

/** The sync loop, as the kubelet's: desired pods and observed containers in, a plan per pod out to its worker. */
@Module({
  imports: [ConfigModule, PodWorkersModule, StatusModule, NodeModule, EventsModule, ProberModule, LifecycleModule, VolumeManagerModule, EvictionModule],
  providers: [ReconcilerService],
  exports: [ReconcilerService],
})
export class KubeletModule {}
