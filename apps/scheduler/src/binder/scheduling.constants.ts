import { SUBJECTS } from '#contracts';

/** What the scheduler folds, one ordered consumer each: the whole pods stream, nodes, its own assignments. */
export const FOLLOWED = {
  pods: '>',
  nodes: SUBJECTS.allNodes,
  assignments: SUBJECTS.allAssignments,
} as const;
