import Docker from 'dockerode';

/**
 * dockerode inside the agent's bundle, which loads it with the rest of the agent: the bundle
 * leaves out ssh2 and gRPC (Docker over `ssh://`, BuildKit sessions), which the agent never
 * uses, so there is nothing heavy to put off. Stands in for `dockerode.ts` there.
 */
export const loadDockerode = (): typeof Docker => Docker;
