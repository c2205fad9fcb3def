import { Inject, Injectable, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { BUS, type Bus, type Subscription } from '#bus';
import { STREAMS, SUBJECTS } from '#contracts';
import { EventLog, NodeTable, PodProjection } from '#domain';

/**
 * The API's read side: pods and nodes folded from the streams. Dropped on restart and
 * rebuilt from the log, it comes out the same.
 */
@Injectable()
export class ProjectionService implements OnModuleInit, OnModuleDestroy {
  readonly pods = new PodProjection();
  readonly nodes = new NodeTable();
  readonly events = new EventLog(10_000);
  /** Last events-stream sequence applied (an event list's resourceVersion). */
  eventsSeq = 0;
  private subscriptions: Subscription[] = [];
  private waiters: Array<{ seq: number; resolve: () => void }> = [];

  constructor(@Inject(BUS) private readonly bus: Bus) {}

  async onModuleInit(): Promise<void> {
    this.subscriptions = await Promise.all([
      this.bus.follow(STREAMS.pods, { filterSubject: '>', from: 'all' }, (envelope, delivery) => {
        this.pods.apply(envelope, delivery.seq);
        this.release();
      }),
      this.bus.follow(STREAMS.nodes, { filterSubject: SUBJECTS.allNodes, from: 'last_per_subject' }, (envelope, delivery) => {
        this.nodes.apply(envelope, delivery.seq);
      }),
      this.bus.follow(STREAMS.events, { filterSubject: SUBJECTS.allContainerEvents, from: 'all' }, (envelope, delivery) => {
        this.events.apply(envelope, delivery.seq);
        this.eventsSeq = Math.max(this.eventsSeq, delivery.seq);
      }),
    ]);
    // Serve nothing until the projection reflects the log as it was at start.
    await Promise.all(this.subscriptions.map((s) => s.caughtUp));
  }

  async onModuleDestroy(): Promise<void> {
    await Promise.all(this.subscriptions.map((s) => s.stop()));
  }

  /** Resolves once the pods projection has applied sequence `seq` (read-your-writes). */
  waitForPods(seq: number, timeoutMs: number): Promise<boolean> {
    if (this.pods.lastSeq >= seq) return Promise.resolve(true);
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w !== waiter);
        resolve(false);
      }, timeoutMs);
      const waiter = { seq, resolve: () => (clearTimeout(timer), resolve(true)) };
      this.waiters.push(waiter);
    });
  }

  private release(): void {
    const done = this.waiters.filter((w) => w.seq <= this.pods.lastSeq);
    if (done.length === 0) return;
    this.waiters = this.waiters.filter((w) => w.seq > this.pods.lastSeq);
    for (const w of done) w.resolve();
  }
}
