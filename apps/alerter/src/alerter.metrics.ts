import { Counter, Gauge } from 'prom-client';
import { metricsRegistry } from '#observability';

/** The alerter's own metrics (consumer lag is the bus's `jetlet_bus_consumer_lag_messages`). */
export const alerterMetrics = {
  firing: new Gauge({ name: 'jetlet_alerter_alerts_firing', help: 'Alerts firing now, by rule', labelNames: ['alertname'], registers: [metricsRegistry] }),
  notifications: new Counter({
    name: 'jetlet_alerter_notifications_total',
    help: 'Notifications sent, by target (alertmanager, webhook) and result (sent, failed)',
    labelNames: ['target', 'result'],
    registers: [metricsRegistry],
  }),
  evaluations: new Counter({ name: 'jetlet_alerter_evaluations_total', help: 'Rule evaluations run', registers: [metricsRegistry] }),
};
