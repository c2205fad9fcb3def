import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';
import { validationMetadatasToSchemas } from 'class-validator-jsonschema';
import '../envelope.js';
import { MESSAGES, type MessageType } from '../message-map.js';
import { STREAM_DEFINITIONS, SUBJECTS } from '../subjects.js';
import { DNS1123_LABEL, DNS1123_LABEL_MAX, DNS1123_SUBDOMAIN, DNS1123_SUBDOMAIN_MAX } from '../names.js';
import { WRITE_ROUTES } from '../writers.js';
import { referencedDefinitions } from '../schema-refs.js';
import { exampleEnvelope } from './message-examples.js';
import { readSourceDocs, type SourceDocs } from './source-docs.js';

type SchemaOptions = NonNullable<Parameters<typeof validationMetadatasToSchemas>[0]>;
type Converter = NonNullable<SchemaOptions['additionalConverters']>[string];
/** class-transformer's @Type metadata, so nested classes become $refs (the package exports its storage only by path). */
const { defaultMetadataStorage } = createRequire(import.meta.url)('class-transformer/cjs/storage') as {
  defaultMetadataStorage: SchemaOptions['classTransformerMetadataStorage'];
};

/** The repository's root, from this file's place in dist/ or in the sources. */
export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), import.meta.url.includes('/dist/') ? '../../../../..' : '../../../..');

type Schema = Record<string, unknown> & {
  type?: string;
  format?: string;
  description?: string;
  enum?: unknown[];
  oneOf?: Schema[];
  properties?: Record<string, Schema>;
  required?: string[];
  $ref?: string;
  items?: Schema;
};

/** What the custom validators (ValidateBy) accept, for the schemas; the reflected type alone says only "object". */
const CUSTOM_SCHEMAS: Record<string, Schema> = {
  isPodStatus: {
    type: 'object',
    description: 'Kubernetes core/v1 PodStatus',
    properties: {
      phase: { type: 'string', enum: ['Pending', 'Running', 'Succeeded', 'Failed', 'Unknown'] },
      conditions: {
        type: 'array',
        items: { type: 'object', properties: { type: { type: 'string' }, status: { type: 'string' } }, required: ['type', 'status'] },
      },
      containerStatuses: {
        type: 'array',
        items: {
          type: 'object',
          properties: {
            name: { type: 'string' },
            state: { type: 'object' },
            lastState: { type: 'object' },
            restartCount: { type: 'integer' },
            ready: { type: 'boolean' },
          },
          required: ['name', 'state', 'lastState', 'restartCount', 'ready'],
        },
      },
    },
    required: ['phase'],
  },
  isNodeObject: {
    type: 'object',
    description: 'Kubernetes core/v1 Node, the subset jetlet reports',
    properties: {
      metadata: {
        type: 'object',
        properties: { name: { type: 'string' }, labels: { type: 'object', additionalProperties: { type: 'string' } } },
        required: ['name', 'labels'],
      },
      spec: { type: 'object' },
      status: {
        type: 'object',
        properties: {
          capacity: { type: 'object', additionalProperties: { type: 'string' } },
          allocatable: { type: 'object', additionalProperties: { type: 'string' } },
          addresses: {
            type: 'array',
            items: { type: 'object', properties: { type: { type: 'string' }, address: { type: 'string' } }, required: ['type', 'address'] },
          },
          nodeInfo: { type: 'object' },
          conditions: { type: 'array', items: { type: 'object' } },
        },
        required: ['capacity', 'allocatable', 'addresses', 'nodeInfo'],
      },
    },
    required: ['metadata', 'spec', 'status'],
  },
  isQuantityMap: { type: 'object', description: 'resource name to Kubernetes quantity', additionalProperties: { type: 'string' } },
  isPortNumberOrName: { oneOf: [{ type: 'integer', minimum: 1, maximum: 65535 }, { type: 'string' }] },
  isDns1123Label: { type: 'string', maxLength: DNS1123_LABEL_MAX, pattern: DNS1123_LABEL.source, description: 'an RFC 1123 label' },
  isDns1123Subdomain: { type: 'string', maxLength: DNS1123_SUBDOMAIN_MAX, pattern: DNS1123_SUBDOMAIN.source, description: 'an RFC 1123 subdomain' },
  isLabelMap: {
    type: 'object',
    description: 'Kubernetes labels: qualified-name keys, values of at most 63 characters',
    additionalProperties: { type: 'string', maxLength: 63, pattern: '^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$' },
  },
  isAnnotationMap: {
    type: 'object',
    description: 'Kubernetes annotations: qualified-name keys, string values, at most 256 KiB in all',
    additionalProperties: { type: 'string' },
  },
  isCleanAbsolutePath: { type: 'string', maxLength: 4096, pattern: '^/', description: 'an absolute, clean path' },
  isQualifiedName: { type: 'string', description: 'a Kubernetes qualified name: [DNS subdomain prefix/]name' },
  isImageReference: { type: 'string', maxLength: 255, description: 'an image reference Docker can parse: [host[:port]/]path[:tag][@digest]' },
};

/** Every class's JSON Schema, from its class-validator metadata, with the doc comments as descriptions. */
function classSchemas(docs: SourceDocs): Record<string, Schema> {
  const schemas = validationMetadatasToSchemas({
    classTransformerMetadataStorage: defaultMetadataStorage,
    refPointerPrefix: '#/definitions/',
    additionalConverters: {
      // Schema's `type` is a plain string here; the library's SchemaObject wants its own union.
      customValidation: ((meta: { name?: string }) => structuredClone((meta.name ? CUSTOM_SCHEMAS[meta.name] : undefined) ?? {})) as unknown as Converter,
    },
  }) as Record<string, Schema>;
  for (const [name, schema] of Object.entries(schemas)) {
    const classDocs = docs.classes.get(name);
    if (!classDocs) continue;
    if (classDocs.doc) schema.description = classDocs.doc;
    for (const [property, propertySchema] of Object.entries(schema.properties ?? {})) {
      const doc = classDocs.properties.get(property);
      if (doc) propertySchema.description = doc;
    }
  }
  return schemas;
}

const sortKeys = (record: Record<string, Schema>): Record<string, Schema> => Object.fromEntries(Object.entries(record).sort(([a], [b]) => a.localeCompare(b)));

/** The file name of a message type's schema under docs/schemas/. */
export const schemaFile = (type: MessageType): string => `${type}.v${MESSAGES[type].version}.schema.json`;

/** A self-contained JSON Schema (draft-07) of each message type's whole envelope, by file name. */
export function renderSchemas(docs: SourceDocs = readSourceDocs(join(REPO_ROOT, 'libs/contracts/src'))): Map<string, string> {
  const all = classSchemas(docs);
  const envelope = all.EnvelopeContract;
  const files = new Map<string, string>();
  for (const type of Object.keys(MESSAGES).sort() as MessageType[]) {
    const message = MESSAGES[type];
    const payload = message.data.name;
    const properties: Record<string, Schema> = {
      ...envelope.properties,
      type: { ...envelope.properties?.type, type: 'string', const: type },
      version: { ...envelope.properties?.version, type: 'integer', const: message.version },
      data: { $ref: `#/definitions/${payload}` },
    };
    delete properties.type.enum;
    const schema: Schema = {
      $schema: 'http://json-schema.org/draft-07/schema#',
      title: `${type} v${message.version}`,
      description: docs.classes.get(payload)?.doc ?? type,
      type: 'object',
      properties,
      required: envelope.required,
    };
    schema.definitions = sortKeys(referencedDefinitions(schema, all));
    files.set(schemaFile(type), `${JSON.stringify(schema, null, 2)}\n`);
  }
  return files;
}

/** A subject pattern with its parameters shown as `<name>`. */
function subjectPattern(route: string | ((...args: string[]) => string)): string {
  if (typeof route === 'string') return route;
  const params =
    /^\(([^)]*)\)/
      .exec(route.toString())?.[1]
      ?.split(',')
      .map((p) => p.trim()) ?? [];
  // Lowercase letters pass token() unchanged; the zz fences keep a placeholder from matching literal text.
  const placeholders = params.map((p) => `zz${p.toLowerCase().replace(/[^a-z]/g, '')}zz`);
  let subject = route(...placeholders);
  params.forEach((p, i) => (subject = subject.split(placeholders[i]).join(`<${p}>`)));
  return subject;
}

function typeOf(schema: Schema): string {
  if (schema.$ref) return schema.$ref.replace('#/definitions/', '');
  if (Array.isArray(schema.enum)) return schema.enum.map((v) => `\`${String(v)}\``).join(' | ');
  if (schema.oneOf) return schema.oneOf.map(typeOf).join(' or ');
  if (schema.type === 'array' && schema.items) return `${typeOf(schema.items)}[]`;
  if (schema.format) return `${schema.type ?? 'string'} (${schema.format})`;
  return schema.type ?? 'object';
}

const cell = (text: string): string => text.replaceAll('|', '\\|').replaceAll('\n', ' ');

function fieldTable(schema: Schema): string[] {
  const required = new Set(schema.required ?? []);
  return [
    '| field | type | required | meaning |',
    '| --- | --- | --- | --- |',
    ...Object.entries(schema.properties ?? {}).map(
      ([name, p]) => `| \`${name}\` | ${cell(typeOf(p))} | ${required.has(name) ? 'yes' : 'no'} | ${cell(p.description ?? '')} |`,
    ),
  ];
}

/** docs/events.md: the public event contract, from the contract classes, SUBJECTS, STREAM_DEFINITIONS and WRITE_ROUTES. */
export function renderEventsMarkdown(docs: SourceDocs = readSourceDocs(join(REPO_ROOT, 'libs/contracts/src'))): string {
  const all = classSchemas(docs);
  const streamOf = (subject: string): string =>
    Object.values(STREAM_DEFINITIONS).find((d) => d.subjects.some((s) => s.split('.')[1] === subject.split('.')[1]))?.name ?? 'none (core NATS)';
  const lines: string[] = [
    '# jetlet events',
    '',
    '<!-- Generated by `npm run docs` from libs/contracts (message classes, SUBJECTS, STREAM_DEFINITIONS, WRITE_ROUTES). Do not edit: a test fails when this file differs from what the contracts generate. -->',
    '',
    'Everything jetlet knows is a message in a NATS JetStream stream. Any NATS client can read',
    'them: subscribe to a subject (core NATS, live only) or create a consumer on a stream',
    '(replay from any point). JSON Schemas of every message, usable from any language, are in',
    '[schemas/](schemas/). `examples/` has a subscriber in a few lines of plain NATS client code.',
    '',
    '## Delivery guarantees',
    '',
    '- **Ordered per subject.** A stream keeps messages in the order it stored them; on one',
    '  subject that is the order its single writer wrote them. Across subjects there is no',
    '  promised order.',
    '- **At least once.** A durable consumer with explicit acks gets a message again until it',
    '  acknowledges it. Consumers must be idempotent: key on the stream sequence or the `id`.',
    '- **Dedupe by `id`.** Every message is published with `Nats-Msg-Id` = `id`; a publish',
    "  retried within the stream's two-minute duplicate window is stored once.",
    '- **One writer per subject.** Each subject has exactly one writing component (below); an',
    '  agent writes only subjects that carry its own node name, and consumers treat a message',
    "  whose node differs from its subject's as invalid.",
    '- **Versions.** A changed payload shape is a new `version` of the type; readers keep',
    '  accepting the old version until no stream holds it.',
    '',
    '## Envelope',
    '',
    'Every message is a JSON object:',
    '',
    ...fieldTable(all.EnvelopeContract),
    '',
    '`source` is `{ "component": "api" | "scheduler" | "agent", "node": "<node>" }` (`node` for agents).',
    '',
    '## Streams',
    '',
    '| stream | subjects | kept per subject | max age | what |',
    '| --- | --- | --- | --- | --- |',
    ...Object.entries(STREAM_DEFINITIONS).map(
      ([key, d]) =>
        `| \`${d.name}\` | ${d.subjects.map((s) => `\`${s}\``).join(', ')} | ${d.maxMsgsPerSubject < 0 ? 'all' : d.maxMsgsPerSubject} | ${d.maxAgeSeconds === 0 ? 'forever' : `${d.maxAgeSeconds / 86400} days`} | ${cell(docs.constants.get(`STREAMS.${key}`) ?? '')} |`,
    ),
    '',
    '## Subjects',
    '',
    'Each name becomes exactly one subject token, injectively: `a-z`, `0-9` and `-` stay, `.`',
    'becomes `_`, and any other character becomes `~` and the two lowercase hex digits of each',
    'of its UTF-8 bytes (`rel.x` → `rel_x`, `rel_x` → `rel~5fx`; the empty name is `~`). So a',
    'subject always has the same number of tokens, and two names never share one.',
    '',
    '| subject | stream | what |',
    '| --- | --- | --- |',
    ...Object.entries(SUBJECTS).map(([key, route]) => {
      const subject = subjectPattern(route);
      return `| \`${subject}\` | ${streamOf(subject)} | ${cell(docs.constants.get(`SUBJECTS.${key}`) ?? '')} |`;
    }),
    '',
    '## Writers',
    '',
    "`{node}` is the writing agent's own node name: an agent writes nowhere else.",
    '',
    '| message | writer | on subjects |',
    '| --- | --- | --- |',
    ...(Object.keys(MESSAGES) as MessageType[]).flatMap((type) => WRITE_ROUTES[type].map((r) => `| ${type} | ${r.writer} | \`${r.subject}\` |`)),
    '',
    '## Messages',
    '',
  ];
  for (const type of Object.keys(MESSAGES) as MessageType[]) {
    const message = MESSAGES[type];
    const schema = all[message.data.name];
    lines.push(
      `### ${type} (version ${message.version})`,
      '',
      docs.classes.get(message.data.name)?.doc ?? '',
      '',
      `Written by ${WRITE_ROUTES[type].map((r) => `${r.writer} on \`${r.subject}\``).join('; ')}. Schema: [${schemaFile(type)}](schemas/${schemaFile(type)}).`,
      '',
      ...fieldTable(schema),
      '',
      'Example:',
      '',
      '```json',
      JSON.stringify(exampleEnvelope(type, message.version), null, 2),
      '```',
      '',
    );
  }
  return lines.join('\n');
}
