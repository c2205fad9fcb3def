import 'reflect-metadata';
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { resourceMetricsText } from './stats.controller.js';

describe('resourceMetricsText', () => {
  it('writes the series metrics-server reads, each family together, with sample times', () => {
    const time = '2026-01-02T03:04:05Z';
    const container = (name: string, ns: number, bytes: number): object => ({
      name,
      cpu: { time, usageCoreNanoSeconds: ns },
      memory: { time, workingSetBytes: bytes, usageBytes: bytes },
    });
    const text = resourceMetricsText({
      node: { nodeName: 'n', cpu: { time, usageCoreNanoSeconds: 2e9, usageNanoCores: 5 }, memory: { time, workingSetBytes: 10, usageBytes: 10 } },
      pods: [
        {
          podRef: { name: 'web', namespace: 'default', uid: '6f1c2b1e-3b9a-4c1d-9f2e-0a1b2c3d4e5f' },
          containers: [container('a', 1e9, 100), container('b', 5e8, 50)],
        },
      ],
    } as never);
    const at = Date.parse(time);
    assert.ok(text.includes(`node_cpu_usage_seconds_total 2 ${at}`));
    assert.ok(text.includes(`container_memory_working_set_bytes{container="b",namespace="default",pod="web"} 50 ${at}`));
    assert.ok(text.includes(`pod_cpu_usage_seconds_total{namespace="default",pod="web"} 1.5 ${at}`));
    assert.ok(text.includes(`pod_memory_working_set_bytes{namespace="default",pod="web"} 150 ${at}`));
    // Every sample follows its own family's TYPE line.
    let family = '';
    for (const line of text.trim().split('\n')) {
      if (line.startsWith('# TYPE ')) family = line.split(' ')[2] ?? '';
      else if (!line.startsWith('#')) assert.ok(line.startsWith(family), line);
    }
  });
});
