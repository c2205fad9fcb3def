import { Module } from '@nestjs/common';
import { ConfigSource } from './config-source.service.js';

/** ConfigMaps and Secrets the pods of this node use, as the kubelet's configmap and secret managers. */
@Module({ providers: [ConfigSource], exports: [ConfigSource] })
export class ConfigMapModule {}
