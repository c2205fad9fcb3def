// Prints every container death in a jetlet cluster with its reason, using only a NATS client.
// Usage: node examples/container-deaths.mjs [nats://127.0.0.1:4222]
import { jetstream } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';

const nc = await connect({ servers: process.argv[2] ?? process.env.NATS_URL ?? 'nats://127.0.0.1:4222' });
// An ordered consumer: the stream's history of container events first, then each new one as it comes.
const consumer = await jetstream(nc).consumers.get('JETLET_EVENTS', { filter_subjects: 'jetlet.events.>' });
for await (const message of await consumer.consume()) {
  const { type, time, data } = message.json();
  if (type !== 'ContainerEvent' || (data.reason !== 'Died' && data.reason !== 'OOMKilled')) continue;
  const why = data.reason === 'OOMKilled' ? 'OOMKilled' : (data.exitReason ?? 'Error');
  console.log(
    `${time} ${data.namespace}/${data.name} container ${data.containerName} on ${data.nodeName} died: ${why} (exit code ${data.exitCode ?? 'unknown'})`,
  );
}
