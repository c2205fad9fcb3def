import 'reflect-metadata';
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseEnvelope } from '../envelope.js';
import { MESSAGES, type MessageType } from '../message-map.js';
import { writerOf } from '../writers.js';
import { REPO_ROOT, renderEventsMarkdown, renderSchemas, schemaFile } from './event-docs.js';
import { exampleEnvelope, MESSAGE_EXAMPLES } from './message-examples.js';

const FIX = 'run `npm run build && npm run docs` and commit the result';

describe('the event contract documents', () => {
  it('docs/events.md is what the contracts generate', () => {
    const checkedIn = readFileSync(join(REPO_ROOT, 'docs/events.md'), 'utf8');
    assert.equal(checkedIn, renderEventsMarkdown(), `docs/events.md differs from the contracts: ${FIX}`);
  });

  it('docs/schemas/ holds exactly the generated schemas', () => {
    const sut = renderSchemas();
    const dir = join(REPO_ROOT, 'docs/schemas');
    assert.deepEqual(readdirSync(dir).sort(), [...sut.keys()].sort(), `docs/schemas/ has other files than the contracts generate: ${FIX}`);
    for (const [file, text] of sut) assert.equal(readFileSync(join(dir, file), 'utf8'), text, `docs/schemas/${file} differs: ${FIX}`);
  });

  it('has a schema per message type that describes its fields and enums', () => {
    const sut = renderSchemas();
    for (const type of Object.keys(MESSAGES) as MessageType[]) assert.ok(sut.has(schemaFile(type)), type);
    const schema = JSON.parse(sut.get(schemaFile('ContainerEvent')) ?? '{}') as {
      properties: { type: { const: string }; data: { $ref: string } };
      definitions: Record<string, { properties: Record<string, { enum?: string[]; description?: string }>; required: string[] }>;
    };
    assert.equal(schema.properties.type.const, 'ContainerEvent');
    const data = schema.definitions.ContainerEventEvent;
    assert.deepEqual(data.properties.reason.enum, ['Started', 'Died', 'OOMKilled', 'Restarted']);
    assert.match(data.properties.exitCode.description ?? '', /Exit code/);
    assert.ok(data.required.includes('containerName'));
  });

  it('shows examples that are valid messages on subjects their writer owns', () => {
    for (const type of Object.keys(MESSAGES) as MessageType[]) {
      const envelope = exampleEnvelope(type, MESSAGES[type].version);
      assert.doesNotThrow(() => parseEnvelope(JSON.parse(JSON.stringify(envelope))), type);
      assert.ok(writerOf(type, MESSAGE_EXAMPLES[type].subject, 'node-1'), `${type} example on a subject no writer owns`);
    }
  });
});
