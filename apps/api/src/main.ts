import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { JetStreamServer } from '#bus';
import { createLogger } from '#observability';
import { requestMetrics } from './metrics/request-metrics.js';
import { routeUpgrades } from './streaming/upgrade.js';

async function bootstrap(): Promise<void> {
  const logger = createLogger('api');
  // The module reads and validates configuration on import: a bad variable fails here, listed.
  const { ApiModule } = await import('./api.module.js');
  const { API_CONFIG } = await import('./api.constants.js');
  const app = await NestFactory.create<NestExpressApplication>(ApiModule, { logger, bodyParser: false });
  // kubectl sends application/json; a manifest is small, so 3 MiB (etcd's object limit) is plenty.
  app.useBodyParser('json', { limit: '3mb', type: ['application/json', 'application/*+json'] });
  // kubectl's typed client (create namespace) posts Kubernetes protobuf; the namespaces route reads it.
  app.useBodyParser('raw', { limit: '3mb', type: 'application/vnd.kubernetes.protobuf' });
  // Server-side apply sends its configuration as YAML (kubectl: JSON, which YAML includes); the route parses it.
  app.useBodyParser('text', { limit: '3mb', type: 'application/apply-patch+yaml' });
  app.use(requestMetrics);
  // Upgrades (exec, attach, port-forward) go through the same middleware, guards and routes as any request.
  routeUpgrades(app.getHttpServer(), app.getHttpAdapter().getInstance());
  app.enableShutdownHooks();
  const config = app.get<{ API_PORT: number; API_ADDRESS: string }>(API_CONFIG);
  // The stream handlers beside the HTTP server; init() returns once the projections have caught up.
  app.connectMicroservice({ strategy: app.get(JetStreamServer) });
  await app.init();
  await app.startAllMicroservices();
  await app.listen(config.API_PORT, config.API_ADDRESS);
  logger.log(`API serving on ${await app.getUrl()}`, 'Bootstrap');
}

bootstrap().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
