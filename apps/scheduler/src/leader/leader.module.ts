import { Module } from '@nestjs/common';
import { LeaderElectionService } from './leader-election.service.js';

/** Which scheduler of those running schedules: the holder of the `kube-scheduler` lease. */
@Module({
  providers: [LeaderElectionService],
  exports: [LeaderElectionService],
})
export class LeaderModule {}
