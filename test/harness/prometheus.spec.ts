import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parsePrometheusText } from './prometheus.js';

describe('parsePrometheusText', () => {
  it('reads families, labels, histograms and special values', () => {
    const sut = parsePrometheusText(
      [
        '# HELP kubelet_running_pods Pods',
        '# TYPE kubelet_running_pods gauge',
        'kubelet_running_pods 3',
        '# TYPE d histogram',
        'd_bucket{le="0.5"} 1',
        'd_bucket{le="+Inf"} 2',
        'd_sum 1.25',
        'd_count 2',
        '# TYPE c counter',
        'c_total{kind="a b",path="x\\"y"} 7 1700000000000',
        '# TYPE g gauge',
        'g NaN',
        '# TYPE lag gauge',
        'lag Nan',
        '',
      ].join('\n'),
    );
    assert.equal(sut.value('kubelet_running_pods'), 3);
    assert.equal(sut.value('d_bucket', { le: '+Inf' }), 2);
    assert.equal(sut.value('d_count'), 2);
    assert.equal(sut.value('c_total', { kind: 'a b', path: 'x"y' }), 7);
    assert.ok(Number.isNaN(sut.value('g')));
    assert.ok(Number.isNaN(sut.value('lag')), 'prom-client writes NaN as Nan');
    assert.equal(sut.types.get('d'), 'histogram');
  });

  it('rejects what is not the exposition format', () => {
    assert.throws(() => parsePrometheusText('<html>oops</html>'), /bad sample/);
    assert.throws(() => parsePrometheusText('# TYPE a gauge\na{x=1} 2'), /bad labels/);
    assert.throws(() => parsePrometheusText('# TYPE a gauge\na two'), /bad sample value/);
    assert.throws(() => parsePrometheusText('undeclared 1'), /no declared metric family/);
    assert.throws(() => parsePrometheusText('# TYPE a gauge\n# TYPE a gauge'), /twice/);
  });
});
