import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as models from '@kubernetes/client-node';
import { REPO_ROOT } from '../docs/event-docs.js';
import { renderKubeSchema } from './render.js';

/** Writes kube-schema.generated.ts from the installed @kubernetes/client-node (`npm run kube-schema`). */
writeFileSync(join(REPO_ROOT, 'libs/contracts/src/kube-schema/kube-schema.generated.ts'), renderKubeSchema(models));
console.log('wrote libs/contracts/src/kube-schema/kube-schema.generated.ts');
