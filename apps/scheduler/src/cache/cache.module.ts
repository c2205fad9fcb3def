import { Module } from '@nestjs/common';
import { CacheController } from './cache.controller.js';
import { SchedulerCache } from './scheduler-cache.service.js';

/** The scheduler's cache of pods and nodes, as kube-scheduler's `internal/cache`. */
@Module({ controllers: [CacheController], providers: [SchedulerCache], exports: [SchedulerCache] })
export class CacheModule {}
