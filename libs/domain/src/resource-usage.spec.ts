import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { cpuQuantity, meminfoWorkingSetBytes, memoryQuantity, nanoCores, procStatBusyNanoseconds } from './resource-usage.js';

describe('resource usage', () => {
  it('turns two cumulative CPU samples into nanocores, and refuses what is not a rate', () => {
    assert.equal(nanoCores({ timeMs: 1_000, usageNanoseconds: 0 }, { timeMs: 3_000, usageNanoseconds: 1e9 }), 500_000_000);
    assert.equal(nanoCores(undefined, { timeMs: 3_000, usageNanoseconds: 1e9 }), undefined);
    assert.equal(nanoCores({ timeMs: 3_000, usageNanoseconds: 0 }, { timeMs: 3_000, usageNanoseconds: 5 }), undefined);
    assert.equal(nanoCores({ timeMs: 1_000, usageNanoseconds: 9e9 }, { timeMs: 3_000, usageNanoseconds: 1e9 }), undefined);
  });

  it('writes quantities as metrics-server does', () => {
    assert.equal(cpuQuantity(1_234_567.6), '1234568n');
    assert.equal(memoryQuantity(5 * 1024 * 1024), '5120Ki');
  });

  it('reads the machine from /proc', () => {
    // user nice system idle iowait irq softirq steal
    assert.equal(procStatBusyNanoseconds('cpu  100 5 50 9999 77 1 2 3 0 0\ncpu0 1 2 3\n'), 161 * 10_000_000);
    assert.equal(procStatBusyNanoseconds('intr 1'), undefined);
    assert.equal(meminfoWorkingSetBytes('MemTotal:       1000 kB\nMemFree:  10 kB\nMemAvailable:    400 kB\n'), 600 * 1024);
    assert.equal(meminfoWorkingSetBytes('MemTotal: 1 kB\n'), undefined);
  });
});
