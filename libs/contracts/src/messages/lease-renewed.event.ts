import { IsInt, IsISO8601, IsString, Matches, Max, Min } from '../class-validator.js';

/**
 * A replica took, renewed or let go of a leader-election lease: Kubernetes' Lease spec
 * (coordination.k8s.io/v1). Writers: the replicas of the component it elects (the scheduler's,
 * for `kube-scheduler`), each publish expecting the subject's sequence its writer last read, so
 * of two that try at once one wins. Its readers judge expiry by their own clock, from when they
 * saw it change, never by `renewTime`: replicas' clocks need not agree.
 */
export class LeaseRenewedEvent {
  /** The lease's name, as its subject's last token says. */
  @Matches(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/, { message: 'name must be a lowercase RFC 1123 label' })
  name: string;

  /** The replica that holds it; empty once its holder let it go. */
  @IsString()
  holderIdentity: string;

  /** How long the others wait, after they last saw it change, before they may take it. */
  @IsInt()
  @Min(1)
  @Max(3600)
  leaseDurationSeconds: number;

  /** When its holder took it (ISO 8601, the holder's clock). */
  @IsISO8601()
  acquireTime: string;

  /** When its holder last renewed it (ISO 8601, the holder's clock). */
  @IsISO8601()
  renewTime: string;

  /** How many times it changed hands. */
  @IsInt()
  @Min(0)
  leaseTransitions: number;
}
