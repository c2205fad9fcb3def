import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Bus } from '#bus';
import { LEASES } from '#contracts';
import { busLeaseStore } from '../../apps/scheduler/src/leader/leader-election.service.js';
import { LeaderElector } from '../../apps/scheduler/src/leader/leader-elector.js';
import { NatsCluster } from '../harness/nats-cluster.js';
import { waitFor } from '../harness/processes.js';

/**
 * The scheduler's lease on a stream with three replicas, as the compose lab keeps it: of
 * writers that read the same record and write at once, one is stored, on a nats-server that
 * orders a subject's expected sequence only before it replicates (nats-io/nats-server#4320).
 */
describe('the kube-scheduler lease on three replicas', { timeout: 120_000 }, () => {
  let cluster: NatsCluster;
  let buses: Bus[];

  before(async () => {
    cluster = await NatsCluster.start();
    // One writer per server: each proposes through its own.
    buses = await Promise.all(
      cluster.urls.map((servers, i) => Bus.connect({ servers, name: `lease-test-${i}`, source: { component: 'scheduler' }, streamReplicas: 3 })),
    );
    // Until the metadata leader knows every server's resources, a stream of three replicas is refused ("no suitable peers").
    await waitFor(
      'the streams on three replicas',
      () =>
        buses[0]?.ensureStreams().then(
          () => true,
          () => undefined,
        ),
      30_000,
      250,
    );
  });

  after(async () => {
    await Promise.all((buses ?? []).map((b) => b.close()));
    await cluster?.stop();
  });

  it('lets one of three electors lead', async () => {
    const electors = buses.map(
      (bus, i) =>
        new LeaderElector(
          'race-elect',
          `elector-${i}`,
          busLeaseStore(bus, LEASES.scheduler),
          { leaseDurationMs: 15_000, renewDeadlineMs: 10_000, retryPeriodMs: 2_000 },
          () => performance.now(),
        ),
    );
    for (let round = 0; round < 20; round++) {
      await Promise.all(electors.map((e) => e.tryAcquireOrRenew()));
      assert.equal(electors.filter((e) => e.isLeader()).length, 1, `round ${round}`);
    }
  });

  it('stores one of three writes that expect the same record, round after round', async () => {
    // The lease's own subject: the stream holds no other.
    const name = LEASES.scheduler;
    const stores = buses.map((bus) => busLeaseStore(bus, name));
    const time = new Date().toISOString();
    const record = (holderIdentity: string, round: number) => ({
      name,
      holderIdentity,
      leaseDurationSeconds: 15,
      acquireTime: time,
      renewTime: time,
      leaseTransitions: round,
    });
    let doubles = 0;
    for (let round = 0; round < 100; round++) {
      const seq = (await stores[0]?.get())?.seq ?? 0;
      const stored = await Promise.all(stores.map((store, i) => store.put(record(`writer-${i}`, round), seq)));
      if (stored.filter(Boolean).length !== 1) doubles++;
    }
    assert.equal(doubles, 0, `rounds with other than one write stored, of 100`);
  });
});
