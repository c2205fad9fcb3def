import 'reflect-metadata';
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { markdownTable, rewriteGeneratedSections, renderCoreSubjectsTable, renderStreamsTable, renderWritersTable } from './architecture-docs.js';
import { REPO_ROOT } from './event-docs.js';

const FIX = 'run `npm run build && npm run docs` and commit the result';

describe('the generated tables of docs/architecture.md', () => {
  it('are what the contracts generate', () => {
    const checkedIn = readFileSync(join(REPO_ROOT, 'docs/architecture.md'), 'utf8');
    assert.equal(checkedIn, rewriteGeneratedSections(checkedIn), `docs/architecture.md's generated tables differ from the contracts: ${FIX}`);
  });

  it('rewrites a stale section between its markers and leaves the rest alone', () => {
    const begin = '<!-- generated:streams (npm run docs; edit libs/contracts, not this table) -->';
    const stale = `# doc\n\nbefore\n\n${begin}\n\n| old |\n\n<!-- end generated:streams -->\n\nafter\n`;
    const sut = rewriteGeneratedSections(stale, { streams: renderStreamsTable });
    assert.equal(sut, `# doc\n\nbefore\n\n${begin}\n\n${renderStreamsTable()}\n\n<!-- end generated:streams -->\n\nafter\n`);
    assert.throws(() => rewriteGeneratedSections('# no markers\n', { streams: renderStreamsTable }), /lost its markers/);
  });

  it('names every stream, each writer and each core subject from the routes', () => {
    const streams = renderStreamsTable();
    for (const name of ['JETLET_PODS', 'JETLET_ASSIGN', 'JETLET_NODES', 'JETLET_EVENTS', 'JETLET_CONFIG']) assert.match(streams, new RegExp(name));
    assert.match(streams, /\| `jetlet\.podstatus\.\{node\}\.\*` +\| agent +\| PodStatusReported +\|/);
    assert.match(streams, /\| `JETLET_EVENTS` +\| 7 days +\|/);
    assert.match(renderWritersTable(), /\| scheduler +\| PodScheduled, /);
    assert.match(renderCoreSubjectsTable(), /\| `jetlet\.streams\.\{node\}\.input\.\*` +\| streams +\| api +\| agent +\| none +\|/);
  });

  it('pads a table as prettier does', () => {
    assert.equal(
      markdownTable(['a', 'long header'], [['wide cell', 'x']]),
      '| a         | long header |\n| --------- | ----------- |\n| wide cell | x           |',
    );
  });
});
