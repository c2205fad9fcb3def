import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import * as models from '@kubernetes/client-node';
import { REPO_ROOT } from '../docs/event-docs.js';
import { renderKubeSchema } from './render.js';

describe('kube-schema.generated.ts', () => {
  it('is what the installed @kubernetes/client-node gives (run `npm run kube-schema` after upgrading it)', () => {
    const sut = readFileSync(join(REPO_ROOT, 'libs/contracts/src/kube-schema/kube-schema.generated.ts'), 'utf8');
    assert.equal(sut, renderKubeSchema(models as Record<string, unknown>));
  });
});
