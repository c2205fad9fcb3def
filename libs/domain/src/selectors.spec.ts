import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { eventFields, EVENT_SELECTABLE_FIELDS, nodeFields, NODE_SELECTABLE_FIELDS, podFields, POD_SELECTABLE_FIELDS } from './selectable-fields.js';
import { parseFieldSelector, parseLabelSelector, SelectorError } from './selectors.js';
import type { Pod } from '#contracts';
import type { KubeEvent } from './event-log.js';

const web = { app: 'web', tier: 'front', version: '3' };
const db = { app: 'db', tier: 'back' };
const bare = {};

function selects(selector: string): string[] {
  const sut = parseLabelSelector(selector);
  return Object.entries({ web, db, bare })
    .filter(([, labels]) => sut.matches(labels))
    .map(([name]) => name);
}

describe('parseLabelSelector', () => {
  it('selects everything when empty', () => {
    assert.deepEqual(selects(''), ['web', 'db', 'bare']);
    assert.equal(parseLabelSelector(undefined).empty, true);
  });

  it('matches equality, double equality and inequality (an absent label is unequal)', () => {
    assert.deepEqual(selects('app=web'), ['web']);
    assert.deepEqual(selects('app==web'), ['web']);
    assert.deepEqual(selects('app!=web'), ['db', 'bare']);
    assert.deepEqual(selects('app = web , tier=front'), ['web']);
  });

  it('matches in and notin (notin also selects objects without the label)', () => {
    assert.deepEqual(selects('app in (web,db)'), ['web', 'db']);
    assert.deepEqual(selects('app notin (web)'), ['db', 'bare']);
    assert.deepEqual(selects('tier in (back), app in (db)'), ['db']);
  });

  it('matches exists and !exists', () => {
    assert.deepEqual(selects('version'), ['web']);
    assert.deepEqual(selects('!version'), ['db', 'bare']);
    assert.deepEqual(selects('app,!version'), ['db']);
  });

  it('matches gt and lt on integers only', () => {
    assert.deepEqual(selects('version>2'), ['web']);
    assert.deepEqual(selects('version<3'), []);
  });

  it('treats "in" and "notin" as ordinary words in values', () => {
    assert.equal(parseLabelSelector('app=in').matches({ app: 'in' }), true);
    assert.equal(parseLabelSelector('app in (notin)').matches({ app: 'notin' }), true);
  });

  it('accepts an empty value and keys with a DNS prefix', () => {
    assert.equal(parseLabelSelector('app=').matches({ app: '' }), true);
    assert.equal(parseLabelSelector('example.com/app=x').matches({ 'example.com/app': 'x' }), true);
  });

  it('rejects what Kubernetes rejects, with its messages', () => {
    const cases: Array<[string, RegExp]> = [
      ['app in web', /unable to parse requirement: found 'web' expected: '\('/],
      ['app in (web', /unable to parse requirement: found '', expected: ',' or '\)'/],
      ['app=web,', /found '', expected: identifier after ','/],
      ['=web', /found '=', expected: !, identifier, or 'end of string'/],
      ['app=web x', /found 'x', expected: ',' or 'end of string'/],
      ['a b', /found 'b', expected: in, notin, =, ==, !=, gt, lt/],
      ['-bad=x', /unable to parse requirement: key: Invalid value: "-bad": name part must consist of alphanumeric characters/],
      ['app=bad value!', /found 'value'/],
      ['app=-x', /values\[0\]\[app\]: Invalid value: "-x": a valid label must be an empty string/],
      ['version>x', /for 'Gt', 'Lt' operators, the value must be an integer/],
      ['Bad_Prefix/app=x', /prefix part a lowercase RFC 1123 subdomain/],
    ];
    for (const [selector, message] of cases) {
      assert.throws(
        () => parseLabelSelector(selector),
        (error: unknown) => error instanceof SelectorError && message.test(error.message),
        selector,
      );
    }
  });
});

describe('parseFieldSelector', () => {
  const fields = { 'metadata.name': 'web', 'status.phase': 'Running', 'spec.nodeName': '' };

  it('matches =, == and != over string values', () => {
    const supported = Object.keys(fields);
    assert.equal(parseFieldSelector('metadata.name=web', supported).matches(fields), true);
    assert.equal(parseFieldSelector('metadata.name==db', supported).matches(fields), false);
    assert.equal(parseFieldSelector('status.phase!=Succeeded,status.phase!=Failed', supported).matches(fields), true);
    assert.equal(parseFieldSelector('spec.nodeName=', supported).matches(fields), true);
    assert.equal(parseFieldSelector('', supported).empty, true);
  });

  it('unescapes \\, \\= and \\\\ in values', () => {
    assert.equal(parseFieldSelector('metadata.name=a\\,b\\=c\\\\', ['metadata.name']).matches({ 'metadata.name': 'a,b=c\\' }), true);
  });

  it('answers an unsupported field as the API server does', () => {
    assert.throws(() => parseFieldSelector('spec.foo=bar', POD_SELECTABLE_FIELDS), /^SelectorError: field label not supported: spec.foo$/);
  });

  it('rejects a term without an operator', () => {
    assert.throws(() => parseFieldSelector('metadata.name', POD_SELECTABLE_FIELDS), /invalid selector: 'metadata.name'; can't understand 'metadata.name'/);
  });
});

describe('selectable fields', () => {
  it('reads a pod as Kubernetes does, with defaults for what is unset', () => {
    const pod = {
      metadata: { name: 'web', namespace: 'default' },
      spec: { containers: [] },
      status: { phase: 'Pending' },
    } as unknown as Pod;
    const sut = parseFieldSelector('spec.nodeName=,spec.restartPolicy=Always,spec.schedulerName=default-scheduler,status.phase=Pending', POD_SELECTABLE_FIELDS);
    assert.equal(sut.matches(podFields(pod)), true);
  });

  it('reads events by involved object, reason, type and source', () => {
    const event = {
      metadata: { name: 'web.1', namespace: 'default' },
      involvedObject: { apiVersion: 'v1', kind: 'Pod', namespace: 'default', name: 'web', uid: 'u1' },
      reason: 'Started',
      type: 'Normal',
      source: { component: 'kubelet', host: 'n1' },
    } as unknown as KubeEvent;
    const sut = parseFieldSelector('involvedObject.kind=Pod,involvedObject.name=web,reason=Started,type=Normal,source=kubelet', EVENT_SELECTABLE_FIELDS);
    assert.equal(sut.matches(eventFields(event)), true);
  });

  it('reads nodes by name and unschedulable', () => {
    const sut = parseFieldSelector('spec.unschedulable=false', NODE_SELECTABLE_FIELDS);
    assert.equal(sut.matches(nodeFields({ metadata: { name: 'n1', labels: {} }, spec: {} })), true);
    assert.equal(sut.matches(nodeFields({ metadata: { name: 'n1', labels: {} }, spec: { unschedulable: true } })), false);
    assert.throws(() => parseFieldSelector('metadata.namespace=x', NODE_SELECTABLE_FIELDS), /field label not supported: metadata.namespace/);
  });
});
