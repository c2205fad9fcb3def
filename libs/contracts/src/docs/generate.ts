import 'reflect-metadata';
import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT, renderEventsMarkdown, renderSchemas } from './event-docs.js';

/** Writes docs/events.md and docs/schemas/ from the contracts (`npm run docs`). */
const schemaDir = join(REPO_ROOT, 'docs/schemas');
mkdirSync(schemaDir, { recursive: true });
const schemas = renderSchemas();
for (const file of readdirSync(schemaDir)) if (!schemas.has(file)) rmSync(join(schemaDir, file));
for (const [file, text] of schemas) writeFileSync(join(schemaDir, file), text);
writeFileSync(join(REPO_ROOT, 'docs/events.md'), renderEventsMarkdown());
console.log(`wrote docs/events.md and ${schemas.size} schemas`);
