import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { PullProgress } from './pull-progress.js';

describe('PullProgress', () => {
  it('sums the layers the engine reports into one figure', () => {
    const sut = new PullProgress();
    assert.equal(sut.observe({ status: 'Pulling from jetlet/big', id: '1.0' }), false, 'a message about the image names no layer');
    assert.equal(sut.observe({ status: 'Pulling fs layer', progressDetail: {}, id: 'aaa' }), true);
    sut.observe({ status: 'Already exists', progressDetail: {}, id: 'bbb' });
    sut.observe({ status: 'Pulling fs layer', progressDetail: {}, id: 'ccc' });
    assert.deepEqual(sut.snapshot(), { layers: 3, layersDone: 1, currentBytes: 0, totalBytes: 0 });

    sut.observe({ status: 'Downloading', progressDetail: { current: 100, total: 1000 }, id: 'aaa' });
    sut.observe({ status: 'Downloading', progressDetail: { current: 50, total: 500 }, id: 'ccc' });
    assert.deepEqual(sut.snapshot(), { layers: 3, layersDone: 1, currentBytes: 150, totalBytes: 1500 });

    sut.observe({ status: 'Download complete', progressDetail: {}, id: 'aaa' });
    sut.observe({ status: 'Extracting', progressDetail: { current: 10, total: 3000 }, id: 'aaa' });
    assert.deepEqual(sut.snapshot(), { layers: 3, layersDone: 1, currentBytes: 1050, totalBytes: 1500 }, 'extraction is not download');

    sut.observe({ status: 'Pull complete', progressDetail: {}, id: 'aaa' });
    sut.observe({ status: 'Pull complete', progressDetail: {}, id: 'ccc' });
    sut.observe({ status: 'Digest: sha256:0123' });
    assert.deepEqual(sut.snapshot(), { layers: 3, layersDone: 3, currentBytes: 1500, totalBytes: 1500 });
  });

  it('says when nothing moved, so callers are not woken for repeats', () => {
    const sut = new PullProgress();
    sut.observe({ status: 'Downloading', progressDetail: { current: 10, total: 100 }, id: 'aaa' });
    assert.equal(sut.observe({ status: 'Downloading', progressDetail: { current: 10, total: 100 }, id: 'aaa' }), false);
    assert.equal(sut.observe({ status: 'Downloading', progressDetail: { current: 20, total: 100 }, id: 'aaa' }), true);
    assert.equal(sut.observe('not an object'), false);
    assert.equal(sut.observe({ status: 'Waiting' }), false, 'a layer status without a layer id is ignored');
  });
});
