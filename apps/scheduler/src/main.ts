import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { createLogger } from '#observability';

async function bootstrap(): Promise<void> {
  const logger = createLogger('scheduler');
  const { SchedulerModule } = await import('./scheduler.module.js');
  // No HTTP: the scheduler talks only to the bus.
  const app = await NestFactory.createApplicationContext(SchedulerModule, { logger });
  app.enableShutdownHooks();
  logger.log('scheduler running', 'Bootstrap');
}

bootstrap().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
