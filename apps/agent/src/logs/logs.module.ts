import { Module } from '@nestjs/common';
import { ConfigModule } from '../config/config.module.js';
import { StatusModule } from '../status/status.module.js';
import { ContainerLogs } from './container-logs.service.js';
import { LogResponder } from './log-responder.service.js';
import { LogsController } from './logs.controller.js';

/** Container logs, served to the API over NATS and to the agent's own HTTP server. */
@Module({ imports: [ConfigModule, StatusModule], controllers: [LogsController], providers: [ContainerLogs, LogResponder], exports: [ContainerLogs] })
export class LogsModule {}
