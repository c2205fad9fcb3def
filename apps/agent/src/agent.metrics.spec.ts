import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { metricsRegistry } from '#observability';
import { parsePrometheusText } from '../../../test/harness/prometheus.js';
import { AgentMetrics } from './agent.metrics.js';

describe('AgentMetrics', () => {
  it("keeps a node's agent in a registry of its own, with the kubelet's labels and no node label", async () => {
    const sut = new AgentMetrics();
    sut.runningPods.set(3);
    sut.actions.inc({ kind: 'RunSandbox' }, 2);
    sut.plegRelistDuration.observe(0.02);
    const own = parsePrometheusText(await sut.registry.metrics());
    assert.equal(own.value('kubelet_running_pods'), 3);
    assert.equal(own.value('jetlet_reconcile_actions_total', { kind: 'RunSandbox' }), 2);
    assert.equal(own.value('kubelet_pleg_relist_duration_seconds_count'), 1);
    assert.equal(own.value('kubelet_pleg_last_seen_seconds'), 0);
    assert.equal(metricsRegistry.getSingleMetric('kubelet_running_pods'), undefined, "the process's registry holds none of it");
    const served = parsePrometheusText(await sut.exposition());
    assert.equal(served.value('kubelet_running_pods'), 3);
  });

  it("puts hollow agents' series in the process's registry, one family each, labelled by node", async () => {
    const [a, b] = [AgentMetrics.ofHollowNode('h-0'), AgentMetrics.ofHollowNode('h-1')];
    assert.equal(a.registry, metricsRegistry);
    a.runningPods.set(2);
    a.probes.inc({ probe_type: 'Liveness', result: 'successful' });
    a.podStreams.inc({ kind: 'exec' });
    b.podStreams.inc({ kind: 'exec' });
    b.podStreams.dec({ kind: 'exec' });
    a.podStartDuration.observe(1.5);
    const end = b.reconcileDuration.startTimer();
    end();
    b.eventStreamConnected.set(1);

    const text = await metricsRegistry.metrics();
    assert.equal(text.match(/^# TYPE kubelet_running_pods gauge$/gm)?.length, 1, 'one family for every node');
    for (const exposition of [parsePrometheusText(text), parsePrometheusText(await b.exposition())]) {
      assert.equal(exposition.value('kubelet_running_pods', { node: 'h-0' }), 2);
      assert.equal(exposition.value('kubelet_running_pods', { node: 'h-1' }), 0, "b's gauge starts at 0, and is not a's");
      assert.equal(exposition.value('jetlet_probe_results_total', { node: 'h-0', probe_type: 'Liveness', result: 'successful' }), 1);
      assert.equal(exposition.value('jetlet_probe_results_total', { node: 'h-1', probe_type: 'Liveness', result: 'successful' }), undefined);
      assert.equal(exposition.value('jetlet_pod_streams', { node: 'h-0', kind: 'exec' }), 1);
      assert.equal(exposition.value('jetlet_pod_streams', { node: 'h-1', kind: 'exec' }), 0);
      assert.equal(exposition.value('kubelet_pod_start_duration_seconds_count', { node: 'h-0' }), 1);
      assert.equal(exposition.value('kubelet_pod_start_duration_seconds_count', { node: 'h-1' }), undefined);
      assert.equal(exposition.value('jetlet_reconcile_duration_seconds_count', { node: 'h-1' }), 1);
      assert.equal(exposition.value('jetlet_runtime_event_stream_connected', { node: 'h-0' }), 0);
      assert.equal(exposition.value('jetlet_runtime_event_stream_connected', { node: 'h-1' }), 1);
    }
  });
});
