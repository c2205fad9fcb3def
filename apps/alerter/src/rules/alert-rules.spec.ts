import 'reflect-metadata';
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadAlertRules, parseAlertRules } from './alert-rules.js';

const ROOT = join(fileURLToPath(import.meta.url), '../../../../../..');

describe('alert rules', () => {
  it('loads the shipped rules file', () => {
    const sut = loadAlertRules(join(ROOT, 'deploy/alerter/rules.yaml'));
    assert.deepEqual(sut.map((r) => r.condition).sort(), [
      'CrashLoopBackOff',
      'FailedScheduling',
      'ImagePullBackOff',
      'LivenessProbeFailing',
      'NodeNotReady',
      'NodePressure',
      'NodePressure',
      'NodePressure',
      'OOMKilled',
      'PodEvicted',
    ]);
    const crash = sut.find((r) => r.alert === 'PodCrashLooping');
    assert.equal(crash?.restarts, 3);
    assert.equal(crash?.windowMs, 600_000);
    assert.equal(sut.find((r) => r.alert === 'PodUnschedulable')?.forMs, 300_000);
  });

  it('names every bad field', () => {
    const text = [
      'rules:',
      '  - alert: bad name',
      '    condition: Exploded',
      '    for: soon',
      '  - alert: Fine',
      '    condition: NodePressure',
      '    labels: { team: 3 }',
    ].join('\n');
    assert.throws(
      () => parseAlertRules(text, 'rules.yaml'),
      (error: Error) =>
        error.name === 'AlertRulesError' &&
        /rules\[0\]\.alert/.test(error.message) &&
        /rules\[0\]\.condition/.test(error.message) &&
        /rules\[0\]\.for/.test(error.message) &&
        /rules\[1\]\.labels/.test(error.message) &&
        /rules\[1\]\.pressure/.test(error.message),
    );
    assert.throws(() => parseAlertRules('rules: [', 'x.yaml'), /not YAML/);
    assert.throws(() => parseAlertRules('{}', 'x.yaml'), /rules/);
  });
});
