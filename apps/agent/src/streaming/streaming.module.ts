import { Module } from '@nestjs/common';
import { ConfigModule } from '../config/config.module.js';
import { StatusModule } from '../status/status.module.js';
import { ContainerStreams } from './container-streams.service.js';
import { PodPortDialer } from './pod-port-dialer.js';
import { StreamResponder } from './stream-responder.service.js';
import { StreamsController } from './streams.controller.js';

/** Exec, attach and port-forward, as the kubelet's streaming server, served to the API over NATS. */
@Module({ imports: [ConfigModule, StatusModule], controllers: [StreamsController], providers: [ContainerStreams, PodPortDialer, StreamResponder] })
export class StreamingModule {}
