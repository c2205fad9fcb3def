import { Module } from '@nestjs/common';
import { ImageGcManager } from './image-gc-manager.service.js';

/** Image garbage collection by disk usage, as the kubelet's image manager. */
@Module({ providers: [ImageGcManager], exports: [ImageGcManager] })
export class ImagesModule {}
