import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import { BUS, JetStreamServer, type Bus } from '#bus';
import { type AnyEnvelope } from '#contracts';
import { AlertFacts, evaluateAlerts, type AlertInstance, type AlertRule } from '#domain';
import { CLOCK, CoalescingQueue, type Clock } from '#workqueue';
import { ALERT_RULES, ALERTER_CONFIG } from '../alerter.constants.js';
import type { AlerterConfig } from '../alerter.config.js';
import { alerterMetrics } from '../alerter.metrics.js';
import { fingerprint, generatorUrl, toPostable } from '../notify/alert-payload.js';
import { postJson } from '../notify/retry.js';
import { ALERT_SOURCES } from './alerter.patterns.js';

const signature = (a: AlertInstance): string => `${a.startsAt}|${a.endsAt ?? ''}|${JSON.stringify(a.annotations)}`;

/**
 * Folds pod, container and node facts from the streams (AlerterController feeds it) into
 * AlertFacts and turns them into alerts. At start its durable consumers are created afresh and read the streams again
 * (pods and nodes from their start, events from LOOKBACK_SECONDS ago), so the alerts are
 * rebuilt from the log, with their original start times, before anything is sent: an
 * alerter restart or a redelivery never invents, loses or duplicates an alert.
 */
@Injectable()
export class AlerterService implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger(AlerterService.name);
  private readonly facts = new AlertFacts();
  private ready = false;
  /** Evaluations: at once when idle, else right after the one under way. */
  private readonly evaluations = new CoalescingQueue(
    () => this.evaluate(),
    (error) => this.logger.error(`evaluation failed: ${(error as Error).stack ?? String(error)}`),
  );
  private timer?: NodeJS.Timeout;
  /** What Alertmanager last got of each alert, and when. */
  private readonly sentToAlertmanager = new Map<string, { signature: string; at: number }>();
  /** What the webhook last got of each alert. */
  private readonly sentToWebhook = new Map<string, string>();
  private current: AlertInstance[] = [];

  constructor(
    @Inject(ALERTER_CONFIG) private readonly config: AlerterConfig,
    @Inject(ALERT_RULES) private readonly rules: AlertRule[],
    @Inject(BUS) private readonly bus: Bus,
    @Inject(CLOCK) private readonly clock: Clock,
    private readonly transport: JetStreamServer,
  ) {}

  /** Caught up with the streams and connected: its alerts reflect the log. */
  get healthy(): boolean {
    return this.ready && this.bus.connected;
  }

  /** The alerts of the last evaluation. */
  alerts(): AlertInstance[] {
    return this.current;
  }

  async onApplicationBootstrap(): Promise<void> {
    await Promise.all(Object.values(ALERT_SOURCES).map((pattern) => this.transport.caughtUp(pattern)));
    this.ready = true;
    this.timer = setInterval(() => this.trigger(), this.config.EVALUATION_SECONDS * 1000);
    this.evaluations.start();
    await this.evaluations.idle();
    this.logger.log(`alert state rebuilt from the log: ${this.current.filter((a) => a.endsAt === undefined).length} alert(s) firing`);
  }

  async onModuleDestroy(): Promise<void> {
    clearInterval(this.timer);
    this.ready = false;
    await this.evaluations.stop();
  }

  /** One fact from `stream`; an evaluation follows when it changed what alerts see. */
  receive(envelope: AnyEnvelope, stream: string, seq: number): void {
    if (this.facts.apply(envelope, stream, seq)) this.trigger();
  }

  /** Evaluates soon: at once when idle, else right after the evaluation under way. */
  private trigger(): void {
    if (this.ready) this.evaluations.add();
  }

  private async evaluate(): Promise<void> {
    const now = this.clock.now();
    const retentionMs = this.config.RESOLVED_RETENTION_SECONDS * 1000;
    this.current = evaluateAlerts(this.rules, this.facts, now, retentionMs);
    alerterMetrics.evaluations.inc();
    alerterMetrics.firing.reset();
    for (const rule of this.rules) alerterMetrics.firing.set({ alertname: rule.alert }, 0);
    for (const a of this.current) if (a.endsAt === undefined) alerterMetrics.firing.inc({ alertname: a.labels.alertname });
    this.facts.prune(now - Math.max(retentionMs, this.config.LOOKBACK_SECONDS * 1000));
    await Promise.all([this.notifyAlertmanager(now), this.notifyWebhook()]);
  }

  /** Sends alerts that are new or changed, and every alert again once per resend interval. */
  private async notifyAlertmanager(now: number): Promise<void> {
    if (!this.config.ALERTMANAGER_URL) return;
    const resendMs = this.config.RESEND_SECONDS * 1000;
    const due = this.current.filter((a) => {
      const last = this.sentToAlertmanager.get(a.key);
      return !last || last.signature !== signature(a) || now - last.at >= resendMs;
    });
    if (due.length === 0) return;
    const body = due.map((a) => toPostable(a, this.config.GENERATOR_BASE_URL, now + 4 * resendMs));
    const urls = this.config.ALERTMANAGER_URL.split(',').map((u) => `${u.trim().replace(/\/+$/, '')}/api/v2/alerts`);
    const results = await Promise.allSettled(urls.map((url) => postJson(url, body, { attempts: 3, baseMs: 200, capMs: 2000, timeoutMs: 5000 })));
    results.forEach((r, i) => {
      alerterMetrics.notifications.inc({ target: 'alertmanager', result: r.status === 'fulfilled' ? 'sent' : 'failed' });
      if (r.status === 'rejected') this.logger.warn(`alerts not delivered to ${urls[i]}: ${String((r.reason as Error).message)}`);
    });
    // Recorded as sent once any Alertmanager has them (they gossip among themselves); else all go again next time.
    if (results.some((r) => r.status === 'fulfilled')) for (const a of due) this.sentToAlertmanager.set(a.key, { signature: signature(a), at: now });
    for (const key of this.sentToAlertmanager.keys()) if (!this.current.some((a) => a.key === key)) this.sentToAlertmanager.delete(key);
  }

  /** POSTs each alert that started or ended since the webhook last heard of it. */
  private async notifyWebhook(): Promise<void> {
    if (!this.config.WEBHOOK_URL) return;
    const changed = this.current.filter((a) => this.sentToWebhook.get(a.key) !== signature(a));
    if (changed.length === 0) return;
    const alerts = changed.map((a) => ({
      status: a.endsAt === undefined ? 'firing' : 'resolved',
      labels: a.labels,
      annotations: a.annotations,
      startsAt: new Date(a.startsAt).toISOString(),
      endsAt: a.endsAt === undefined ? '0001-01-01T00:00:00Z' : new Date(a.endsAt).toISOString(),
      generatorURL: generatorUrl(this.config.GENERATOR_BASE_URL, a.labels),
      fingerprint: fingerprint(a),
    }));
    const body = { version: '4', receiver: 'jetlet-alerter', status: alerts.some((a) => a.status === 'firing') ? 'firing' : 'resolved', alerts };
    try {
      await postJson(this.config.WEBHOOK_URL, body, { attempts: 5, baseMs: 500, capMs: 10_000, timeoutMs: 5000 });
      alerterMetrics.notifications.inc({ target: 'webhook', result: 'sent' });
      for (const a of changed) this.sentToWebhook.set(a.key, signature(a));
    } catch (error) {
      alerterMetrics.notifications.inc({ target: 'webhook', result: 'failed' });
      this.logger.warn(`webhook ${this.config.WEBHOOK_URL} not notified: ${(error as Error).message}`);
    }
    for (const key of this.sentToWebhook.keys()) if (!this.current.some((a) => a.key === key)) this.sentToWebhook.delete(key);
  }
}
