package dev.taskline;

import dev.taskline.cluster.Cluster;
import dev.taskline.control.DeadlineSweep;
import dev.taskline.control.QueuePauses;
import dev.taskline.events.EventHub;
import dev.taskline.queue.Promoter;
import dev.taskline.recovery.Recovery;
import dev.taskline.recovery.Retention;
import dev.taskline.recovery.WakeUps;
import dev.taskline.schedule.Scheduler;
import dev.taskline.service.KeyService;
import dev.taskline.worker.RemoteWorkers;
import dev.taskline.workflow.BlockedCount;
import dev.taskline.workflow.Waker;

/**
 * A node's background loops, each of which exposes the one pass its timer runs: what a test runs by
 * hand, with its own clock, instead of waiting for the timer.
 *
 * @param recovery  reload, page-in, lapsed leases ({@code runOnce}) and the rows no unit holds past retention
 *                  ({@code cleanOnce})
 * @param retention the journal's units: made ahead, dropped past retention
 * @param promoter  scheduled tasks that came due
 * @param pauses    the queues' switches, as the journal holds them
 * @param deadlines tasks not started by their deadlines
 * @param scheduler the schedules' ticks
 * @param remote    remote leases past their time or ended elsewhere; waiting claims
 * @param events    streams caught up with other nodes' writes
 * @param keys      the keys issued through any node's API ({@code refresh})
 * @param blocked   the journal's blocked flow tasks, counted for flows.maxBlocked and tenant limits
 * @param waker     suspended tasks whose sleep or wait's time came
 * @param cluster   the heartbeat and upkeep lease ({@code runOnce}), the registry
 * @param wakeUps   page-ins that other nodes' notifications ask for
 */
public record Passes(
        Recovery recovery,
        Retention retention,
        Promoter promoter,
        QueuePauses pauses,
        DeadlineSweep deadlines,
        Scheduler scheduler,
        RemoteWorkers remote,
        EventHub events,
        KeyService keys,
        BlockedCount blocked,
        Waker waker,
        Cluster cluster,
        WakeUps wakeUps) {}
