import { Module } from '@nestjs/common';
import { ConfigModule } from '../config/config.module.js';
import { KubeletModule } from '../kubelet/kubelet.module.js';
import { LogsModule } from '../logs/logs.module.js';
import { StatusModule } from '../status/status.module.js';
import { AgentHttpController } from './agent-http.controller.js';

/** The agent's own HTTP server: health, pods, logs and metrics, as the kubelet's server. */
@Module({ imports: [KubeletModule, ConfigModule, StatusModule, LogsModule], controllers: [AgentHttpController] })
export class ServerModule {}
