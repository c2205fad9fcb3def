export * from './consumer.options.js';
export * from './contract.pipe.js';
export * from './jetstream-exception.filter.js';
export * from './jetstream.client.js';
export * from './jetstream.context.js';
export * from './jetstream.server.js';
export * from './raw-message.js';
