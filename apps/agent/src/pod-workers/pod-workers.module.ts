import { Module } from '@nestjs/common';
import { ConfigMapModule } from '../configmap/configmap.module.js';
import { EventsModule } from '../events/events.module.js';
import { LifecycleModule } from '../lifecycle/lifecycle.module.js';
import { NodeModule } from '../node/node.module.js';
import { VolumeManagerModule } from '../volumemanager/volumemanager.module.js';
import { PodExecutor } from './pod-executor.js';

/** The steps of one pod's work (sandbox, containers, stop, remove), as the kubelet's pod workers run them. */
@Module({
  imports: [EventsModule, LifecycleModule, ConfigMapModule, NodeModule, VolumeManagerModule],
  providers: [PodExecutor],
  exports: [PodExecutor],
})
export class PodWorkersModule {}
