import { Module } from '@nestjs/common';
import { ConfigMapModule } from '../configmap/configmap.module.js';
import { NodeModule } from '../node/node.module.js';
import { HostMounts } from './host-mounts.js';
import { VolumeManager } from './volume-manager.service.js';

/** Pod volumes, as the kubelet's volume manager. */
@Module({ imports: [ConfigMapModule, NodeModule], providers: [VolumeManager, HostMounts], exports: [VolumeManager] })
export class VolumeManagerModule {}
