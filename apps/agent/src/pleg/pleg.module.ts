import { Module } from '@nestjs/common';
import { KubeletModule } from '../kubelet/kubelet.module.js';
import { PlegService } from './pleg.service.js';

/** The pod lifecycle event generator: Docker's events and a periodic relist wake the sync loop (its health is in the agent's core). */
@Module({ imports: [KubeletModule], providers: [PlegService] })
export class PlegModule {}
