import type { RestartPolicy } from '#contracts';

/** Whether a container that exited with `exitCode` is started again under `policy` (Kubernetes' restartPolicy). */
export function shouldRestart(policy: RestartPolicy, exitCode: number): boolean {
  switch (policy) {
    case 'Always':
      return true;
    case 'OnFailure':
      return exitCode !== 0;
    case 'Never':
      return false;
  }
}
