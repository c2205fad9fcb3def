import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import { BUS, type Bus } from '#bus';
import { SUBJECTS } from '#contracts';
import { bytesToFree, ImageRecords, type ImageGcPolicy } from '#domain/image-gc';
import type { ContainerRuntime } from '#runtime';
import { AGENT_CONFIG, RUNTIME } from '../agent.constants.js';
import type { AgentConfig } from '../agent.config.js';
import { EVICTION_SIGNAL_READER, type SignalReader } from '../eviction/eviction.constants.js';

/** What one collection did. */
export interface ImageGcResult {
  removed: string[];
  freedBytes: number;
}

/**
 * The kubelet's image garbage collector (pkg/kubelet/images): every IMAGE_GC_PERIOD_SECONDS it
 * records the engine's images and which ones containers use, and when the image filesystem is
 * used at or above IMAGE_GC_HIGH_THRESHOLD_PERCENT removes unused images, least recently used
 * first, until usage is down to IMAGE_GC_LOW_THRESHOLD_PERCENT. The pause image is pinned; an
 * image any container of the engine uses (jetlet's or not) is never touched, and removal is
 * never forced. The eviction manager asks it to remove every eligible image before it evicts
 * for disk.
 */
@Injectable()
export class ImageGcManager implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger(ImageGcManager.name);
  private readonly records = new ImageRecords();
  private readonly policy: ImageGcPolicy;
  private timer?: NodeJS.Timeout;
  private running?: Promise<ImageGcResult>;

  constructor(
    @Inject(AGENT_CONFIG) private readonly config: AgentConfig,
    @Inject(RUNTIME) private readonly runtime: ContainerRuntime,
    @Inject(BUS) private readonly bus: Bus,
    @Inject(EVICTION_SIGNAL_READER) private readonly reader: SignalReader,
  ) {
    this.policy = {
      highThresholdPercent: config.IMAGE_GC_HIGH_THRESHOLD_PERCENT,
      lowThresholdPercent: config.IMAGE_GC_LOW_THRESHOLD_PERCENT,
      minAgeMs: config.IMAGE_MINIMUM_GC_AGE_SECONDS * 1000,
    };
  }

  /** False when IMAGE_GC_HIGH_THRESHOLD_PERCENT is 100: no image is ever removed. */
  get enabled(): boolean {
    return this.policy.highThresholdPercent < 100;
  }

  onApplicationBootstrap(): void {
    if (!this.enabled) return;
    this.timer = setInterval(
      () => void this.garbageCollect().catch((error: Error) => this.logger.warn(`image garbage collection failed: ${error.message}`)),
      this.config.IMAGE_GC_PERIOD_SECONDS * 1000,
    );
  }

  onModuleDestroy(): void {
    clearInterval(this.timer);
  }

  /** One periodic collection: frees what the thresholds ask for, if anything. */
  garbageCollect(): Promise<ImageGcResult> {
    return this.serialised(async () => {
      const reading = this.reader.read()['imagefs.available'];
      if (!reading.ok) return { removed: [], freedBytes: 0 };
      const { inUse, now } = await this.detect();
      const bytes = bytesToFree(this.policy, reading.value.capacity, reading.value.available);
      if (bytes === 0) return { removed: [], freedBytes: 0 };
      return this.free(bytes, inUse, now);
    });
  }

  /** Removes every image old enough that nothing uses (the kubelet's DeleteUnusedImages, before a disk eviction). */
  deleteUnusedImages(): Promise<ImageGcResult> {
    if (!this.enabled) return Promise.resolve({ removed: [], freedBytes: 0 });
    return this.serialised(async () => {
      const { inUse, now } = await this.detect();
      return this.free(Number.MAX_SAFE_INTEGER, inUse, now, false);
    });
  }

  private serialised(work: () => Promise<ImageGcResult>): Promise<ImageGcResult> {
    this.running ??= work().finally(() => (this.running = undefined));
    return this.running;
  }

  private async detect(): Promise<{ inUse: Set<string>; now: number }> {
    const [images, containers] = await Promise.all([this.runtime.listImages(), this.runtime.listContainers({})]);
    const inUse = new Set(containers.map((c) => c.imageId));
    const now = Date.now();
    this.records.detect(images, inUse, now);
    return { inUse, now };
  }

  private async free(bytes: number, inUse: Set<string>, now: number, reportShortfall = true): Promise<ImageGcResult> {
    const pause = await this.runtime.imageId(this.config.POD_INFRA_IMAGE).catch(() => undefined);
    const plan = this.records.plan(bytes, inUse, new Set(pause ? [pause] : []), now, this.policy.minAgeMs);
    const removed: string[] = [];
    let freedBytes = 0;
    for (const image of plan.remove) {
      try {
        await this.runtime.removeImage(image.id);
        removed.push(image.id);
        freedBytes += image.size;
        this.logger.log(`removed unused image ${image.id} (${image.size} bytes)`);
      } catch (error) {
        this.logger.warn(`image garbage collection could not remove ${image.id}: ${(error as Error).message}`);
      }
    }
    if (reportShortfall && freedBytes < bytes)
      this.nodeEvent(
        'FreeDiskSpaceFailed',
        `Failed to garbage collect required amount of images. Attempted to free ${bytes} bytes, but only found ${freedBytes} bytes eligible to free.`,
      );
    return { removed, freedBytes };
  }

  private nodeEvent(reason: string, message: string): void {
    this.bus.publishBuffered(
      SUBJECTS.nodeEvents(this.config.NODE_NAME),
      'NodeEvent',
      { nodeName: this.config.NODE_NAME, eventType: 'Warning', reason, message, observedAt: new Date().toISOString() },
      { correlationId: this.config.NODE_NAME },
    );
  }
}
