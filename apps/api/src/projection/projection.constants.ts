import { SUBJECTS } from '#contracts';

/** The subjects the API projects, one ordered consumer each: the whole pods stream, nodes, events, and ConfigMaps and Secrets. */
export const PROJECTED = {
  pods: '>',
  nodes: SUBJECTS.allNodes,
  events: SUBJECTS.allContainerEvents,
  /** The whole config stream (filter `>`, named apart from the pods stream's). */
  config: 'config',
} as const;
