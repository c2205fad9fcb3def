import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { JetStreamServer } from '#bus';
import { createLogger } from '#observability';

async function bootstrap(): Promise<void> {
  const logger = createLogger('scheduler');
  const { SchedulerModule } = await import('./scheduler.module.js');
  // No HTTP of its own (the app never listens; /metrics has its own small server): the scheduler talks only to the bus.
  const app = await NestFactory.create(SchedulerModule, { logger });
  app.enableShutdownHooks();
  app.connectMicroservice({ strategy: app.get(JetStreamServer) });
  await app.init();
  await app.startAllMicroservices();
  logger.log('scheduler running', 'Bootstrap');
}

bootstrap().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
