import { SUBJECTS } from '#contracts';

/** The scheduler's own node work, read back with an ordered consumer from the last message per subject. */
export const ASSIGNMENTS = SUBJECTS.allAssignments;
