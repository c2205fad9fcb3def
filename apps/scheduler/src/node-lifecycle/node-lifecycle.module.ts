import { Module } from '@nestjs/common';
import { CacheModule } from '../cache/cache.module.js';
import { NodeLifecycleService } from './node-lifecycle.service.js';

/** Node readiness, the taint manager's evictions and the finalising of deletions on lost nodes. */
@Module({ imports: [CacheModule], providers: [NodeLifecycleService], exports: [NodeLifecycleService] })
export class NodeLifecycleModule {}
