import 'reflect-metadata';
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { rewriteGeneratedSections } from './architecture-docs.js';
import { REPO_ROOT, renderEventsMarkdown, renderSchemas } from './event-docs.js';

/** Writes docs/events.md, docs/schemas/ and the generated tables of docs/architecture.md from the contracts (`npm run docs`). */
const schemaDir = join(REPO_ROOT, 'docs/schemas');
mkdirSync(schemaDir, { recursive: true });
const schemas = renderSchemas();
for (const file of readdirSync(schemaDir)) if (!schemas.has(file)) rmSync(join(schemaDir, file));
for (const [file, text] of schemas) writeFileSync(join(schemaDir, file), text);
writeFileSync(join(REPO_ROOT, 'docs/events.md'), renderEventsMarkdown());
const architecture = join(REPO_ROOT, 'docs/architecture.md');
writeFileSync(architecture, rewriteGeneratedSections(readFileSync(architecture, 'utf8')));
console.log(`wrote docs/events.md, ${schemas.size} schemas and the generated tables of docs/architecture.md`);
