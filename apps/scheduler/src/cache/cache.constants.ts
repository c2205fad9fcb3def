import { SUBJECTS } from '#contracts';

/** What the scheduler's cache folds, one ordered consumer each: the whole pods stream, and nodes. */
export const CACHED = {
  pods: '>',
  nodes: SUBJECTS.allNodes,
} as const;
