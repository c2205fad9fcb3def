import { Module } from '@nestjs/common';
import { EventsModule } from '../events/events.module.js';
import { LifecycleModule } from '../lifecycle/lifecycle.module.js';
import { PodWorkersModule } from '../pod-workers/pod-workers.module.js';
import { ProberService } from './prober.service.js';

/** Liveness, readiness and startup probes, as the kubelet's prober manager: it reports results, the pod's worker acts. */
@Module({ imports: [LifecycleModule, EventsModule, PodWorkersModule], providers: [ProberService], exports: [ProberService] })
export class ProberModule {}
