import { Module } from '@nestjs/common';
import { BusModule, busTls } from '#bus';
import { loadConfig } from '#contracts';
import { MetricsController } from '#observability';
import { CLOCK, systemClock } from '#workqueue';
import { ALERT_RULES, ALERTER_CONFIG } from './alerter.constants.js';
import { AlerterConfig } from './alerter.config.js';
import { AlerterController } from './alerting/alerter.controller.js';
import { AlerterService } from './alerting/alerter.service.js';
import { AlerterHttpController } from './http/alerter-http.controller.js';
import { loadAlertRules } from './rules/alert-rules.js';

const config = loadConfig(AlerterConfig);
// A bad rules file stops the alerter at start, naming every bad field.
const rules = loadAlertRules(config.ALERT_RULES_FILE);

@Module({
  imports: [
    BusModule.forRoot(
      () => ({
        servers: config.NATS_URL,
        name: 'jetlet-alerter',
        streamReplicas: config.STREAM_REPLICAS,
        source: { component: 'alerter' },
        credentials: { identity: { kind: 'alerter' }, seedFile: config.NATS_NKEY_SEED_FILE },
        tls: busTls(config),
      }),
      () => ({ config: { ...config }, now: () => systemClock.now() }),
    ),
  ],
  controllers: [MetricsController, AlerterHttpController, AlerterController],
  providers: [
    { provide: ALERTER_CONFIG, useValue: config },
    { provide: ALERT_RULES, useValue: rules },
    { provide: CLOCK, useValue: systemClock },
    AlerterService,
  ],
})
export class AlerterModule {}
