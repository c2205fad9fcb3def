import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Counter, Gauge, Registry } from 'prom-client';
import { CounterTally, GaugeCells } from './metrics.js';

describe('CounterTally', () => {
  it('hands every increment to its counter, by label values, when the registry is scraped', async () => {
    const registry = new Registry();
    const counter: Counter<'stream' | 'type'> = new Counter({
      name: 't_total',
      help: 'h',
      labelNames: ['stream', 'type'],
      registers: [registry],
      collect: (): void => sut.flush(),
    });
    const sut: CounterTally<'stream' | 'type'> = new CounterTally(counter, ['stream', 'type']);

    sut.inc('pods', 'PodScheduled');
    sut.inc('pods', 'PodScheduled');
    sut.inc('assign', 'PodAssigned');
    const first = await registry.getSingleMetricAsString('t_total');
    sut.inc('pods', 'PodScheduled');
    sut.add(0.5, 'assign', 'PodAssigned');
    const second = await registry.getSingleMetricAsString('t_total');

    assert.match(first, /t_total\{stream="pods",type="PodScheduled"\} 2/);
    assert.match(first, /t_total\{stream="assign",type="PodAssigned"\} 1/);
    assert.match(second, /t_total\{stream="pods",type="PodScheduled"\} 3/);
    assert.match(second, /t_total\{stream="assign",type="PodAssigned"\} 1.5/);
  });
});

describe('GaugeCells', () => {
  it("shows each cell's last value from its first one on, and keeps the last once the cell is dropped", async () => {
    const registry = new Registry();
    const gauge: Gauge<'consumer'> = new Gauge({ name: 'g', help: 'h', labelNames: ['consumer'], registers: [registry], collect: (): void => sut.read() });
    const sut: GaugeCells<'consumer'> = new GaugeCells(gauge);

    const cell = sut.cell({ consumer: 'a' });
    const before = await registry.getSingleMetricAsString('g');
    cell.set(5);
    cell.set(3);
    const after = await registry.getSingleMetricAsString('g');
    cell.drop();
    cell.set(9);
    const dropped = await registry.getSingleMetricAsString('g');

    assert.doesNotMatch(before, /consumer="a"/);
    assert.match(after, /g\{consumer="a"\} 3/);
    assert.match(dropped, /g\{consumer="a"\} 3/);
  });
});
