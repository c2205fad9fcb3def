import { SUBJECTS } from '#contracts';

/** The subjects alerts are folded from, one durable consumer each. */
export const ALERT_SOURCES = {
  pods: '>',
  events: SUBJECTS.allContainerEvents,
  nodes: SUBJECTS.allNodes,
} as const;
