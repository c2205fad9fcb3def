import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { createLogger } from '#observability';

async function bootstrap(): Promise<void> {
  const logger = createLogger('agent');
  // The module reads and validates configuration on import: a bad variable fails here, listed.
  const { AgentModule } = await import('./agent.module.js');
  const { AGENT_CONFIG } = await import('./agent.constants.js');
  const app = await NestFactory.create(AgentModule, { logger });
  app.enableShutdownHooks();
  const config = app.get<{ AGENT_PORT: number; AGENT_ADDRESS: string; NODE_NAME: string }>(AGENT_CONFIG);
  await app.listen(config.AGENT_PORT, config.AGENT_ADDRESS);
  logger.log(`agent for node ${config.NODE_NAME} serving on ${await app.getUrl()}`, 'Bootstrap');
}

bootstrap().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
