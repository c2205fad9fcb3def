import { THIS_NODE } from '#bus';
import { SUBJECTS } from '#contracts';

/** This node's assignments: the pattern of the consumer the desired state is rebuilt from. */
export const ASSIGNMENTS = SUBJECTS.nodeAssignments(THIS_NODE);
