import { watch, type FSWatcher } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import { BUS, type Bus } from '#bus';
import { SUBJECTS } from '#contracts';
import type { DesiredPod } from '#domain/reconcile';
import { podRef } from '#observability';
import { AGENT_CONFIG } from '../agent.constants.js';
import type { AgentConfig } from '../agent.config.js';
import { DesiredStateService } from './desired-state.service.js';
import type { StaticSource } from './static-pod-manifests.js';

/**
 * Static pods: manifests in STATIC_POD_PATH (watched, and rescanned every
 * FILE_CHECK_FREQUENCY_SECONDS) and at MANIFEST_URL (polled every
 * HTTP_CHECK_FREQUENCY_SECONDS) run on this node without the scheduler. Each shows in the
 * API as a read-only mirror pod; an invalid manifest is reported and skipped.
 */
@Injectable()
export class StaticPodSource implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger(StaticPodSource.name);
  /** Static pods by origin (file path or URL). */
  private readonly pods = new Map<string, DesiredPod>();
  /** The content last reported invalid, by origin, so a bad file is reported once per change. */
  private readonly reported = new Map<string, string>();
  private readonly timers: NodeJS.Timeout[] = [];
  private watcher?: FSWatcher;
  private debounce?: NodeJS.Timeout;
  private scanning = Promise.resolve();

  constructor(
    @Inject(AGENT_CONFIG) private readonly config: AgentConfig,
    @Inject(BUS) private readonly bus: Bus,
    private readonly desired: DesiredStateService,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    const dir = this.config.STATIC_POD_PATH;
    if (dir) {
      try {
        this.watcher = watch(dir, () => {
          clearTimeout(this.debounce);
          this.debounce = setTimeout(() => this.rescan(), 200);
        });
        this.watcher.on('error', (error) =>
          this.logger.warn(`watching ${dir} failed: ${error.message}; rescanning every ${this.config.FILE_CHECK_FREQUENCY_SECONDS}s`),
        );
      } catch (error) {
        this.logger.warn(`cannot watch ${dir}: ${(error as Error).message}; rescanning every ${this.config.FILE_CHECK_FREQUENCY_SECONDS}s`);
      }
      this.timers.push(setInterval(() => this.rescan(), this.config.FILE_CHECK_FREQUENCY_SECONDS * 1000));
    }
    if (this.config.MANIFEST_URL) this.timers.push(setInterval(() => this.rescan(), this.config.HTTP_CHECK_FREQUENCY_SECONDS * 1000));
    this.rescan();
    await this.scanning;
  }

  onModuleDestroy(): void {
    for (const timer of this.timers) clearInterval(timer);
    clearTimeout(this.debounce);
    this.watcher?.close();
  }

  /** The API deleted the mirror of a static pod: the pod runs on, so its mirror is announced again. */
  mirrorDeleted(uid: string): void {
    const pod = [...this.pods.values()].find((p) => p.uid === uid);
    if (pod) void this.announce(pod);
  }

  /** Scans every source once; scans never overlap. */
  private rescan(): void {
    this.scanning = this.scanning.then(() => this.scan()).catch((error: unknown) => this.logger.error(`static pod scan failed: ${(error as Error).message}`));
  }

  private async scan(): Promise<void> {
    const found = new Map<string, { text: string; source: StaticSource }>();
    const dir = this.config.STATIC_POD_PATH;
    if (dir) {
      const names = await readdir(dir).catch((error: unknown) => {
        this.logger.warn(`cannot read ${dir}: ${(error as Error).message}`);
        return [];
      });
      for (const name of names.filter((n) => /\.(ya?ml|json)$/.test(n) && !n.startsWith('.')).sort()) {
        const path = join(dir, name);
        const text = await readFile(path, 'utf8').catch(() => undefined);
        if (text !== undefined) found.set(path, { text, source: 'file' });
      }
    }
    const url = this.config.MANIFEST_URL;
    if (url) {
      try {
        const response = await fetch(url, { signal: AbortSignal.timeout(10_000) });
        if (!response.ok) throw new Error(`HTTP ${response.status}`);
        found.set(url, { text: await response.text(), source: 'http' });
      } catch (error) {
        this.logger.warn(`manifest URL ${url} not read: ${(error as Error).message}`);
        // An unreachable URL keeps what it gave before, as the kubelet does.
        const previous = this.pods.get(url);
        if (previous) found.set(url, { text: JSON.stringify(previous.manifest), source: 'http' });
      }
    }

    const next = new Map<string, DesiredPod>();
    for (const [origin, { text, source }] of found) {
      const current = this.pods.get(origin);
      if (current && source === 'http' && text === JSON.stringify(current.manifest)) {
        next.set(origin, current);
        continue;
      }
      // Loaded on the first manifest: its YAML parser is about 70 files a node without static pods never needs.
      const { parseStaticManifest } = await import('./static-pod-manifests.js');
      const parsed = parseStaticManifest(text, origin, source, this.config.NODE_NAME);
      if (parsed.ok) {
        next.set(origin, parsed.pod);
        this.reported.delete(origin);
      } else if (this.reported.get(origin) !== text) {
        this.reported.set(origin, text);
        const detail = parsed.causes.map((c) => (c.field ? `${c.field}: ${c.message}` : c.message)).join('; ');
        this.logger.warn(`invalid static pod manifest ${origin} skipped: ${detail}`);
        this.bus.publishBuffered(
          SUBJECTS.nodeEvents(this.config.NODE_NAME),
          'NodeEvent',
          {
            nodeName: this.config.NODE_NAME,
            eventType: 'Warning',
            reason: 'FailedStaticPod',
            message: `invalid static pod manifest ${origin}: ${detail}`,
            observedAt: new Date().toISOString(),
          },
          { correlationId: this.config.NODE_NAME },
        );
      }
    }

    const changed = [...next.values()].filter((p) => ![...this.pods.values()].some((q) => q.uid === p.uid));
    const firstScan = this.pods.size === 0 && this.reported.size === 0;
    this.pods.clear();
    for (const [origin, pod] of next) this.pods.set(origin, pod);
    this.desired.setStatic([...next.values()]);
    for (const pod of firstScan ? [...next.values()] : changed) {
      this.logger.log(`static pod ${podRef(pod)} from ${[...next].find(([, p]) => p === pod)?.[0] ?? '?'}`);
      await this.announce(pod);
    }
  }

  /** Publishes the pod's mirror (a fresh message id each time: a re-announcement must be stored). */
  private async announce(pod: DesiredPod): Promise<void> {
    await this.bus
      .publish(SUBJECTS.mirrorPod(this.config.NODE_NAME, pod.uid), 'MirrorPodUpdated', { pod: pod.manifest }, { correlationId: pod.uid })
      .catch((error: unknown) => this.logger.warn(`mirror of ${podRef(pod)} not published: ${(error as Error).message}`));
  }
}
