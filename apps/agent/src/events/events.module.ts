import { Module } from '@nestjs/common';
import { EventRecorder } from './event-recorder.service.js';

/** The agent's Kubernetes Events, as the kubelet's event recorder. */
@Module({ providers: [EventRecorder], exports: [EventRecorder] })
export class EventsModule {}
