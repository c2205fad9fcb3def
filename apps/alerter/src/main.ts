import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { JetStreamServer } from '#bus';
import { createLogger } from '#observability';

async function bootstrap(): Promise<void> {
  const logger = createLogger('alerter');
  // The module reads and validates configuration and rules on import: a bad one fails here, listed.
  const { AlerterModule } = await import('./alerter.module.js');
  const { ALERTER_CONFIG } = await import('./alerter.constants.js');
  const app = await NestFactory.create(AlerterModule, { logger });
  app.enableShutdownHooks();
  const config = app.get<{ ALERTER_PORT: number; ALERTER_ADDRESS: string }>(ALERTER_CONFIG);
  app.connectMicroservice({ strategy: app.get(JetStreamServer) });
  await app.init();
  await app.startAllMicroservices();
  await app.listen(config.ALERTER_PORT, config.ALERTER_ADDRESS);
  logger.log(`alerter serving on ${await app.getUrl()}`, 'Bootstrap');
}

bootstrap().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
