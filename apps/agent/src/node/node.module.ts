import { Module } from '@nestjs/common';
import { ConfigModule } from '../config/config.module.js';
import { EvictionModule } from '../eviction/eviction.module.js';
import { NodeService } from './node.service.js';

/** The node's registration, heartbeats and conditions, as the kubelet's node status. */
@Module({ imports: [ConfigModule, EvictionModule], providers: [NodeService], exports: [NodeService] })
export class NodeModule {}
