import { ASSIGNMENTS } from '../assignments/assignments.constants.js';
import { CACHED } from '../cache/cache.constants.js';

/** Every pattern the scheduler follows: a pass waits until each has caught up with its stream. */
export const FOLLOWED = { ...CACHED, assignments: ASSIGNMENTS } as const;
