package dev.taskline.worker;

import dev.taskline.worker.RemoteWorkers.Worker;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The remote workers this node has heard from (a claim, a write), with the queue and time of the
 * last. Names are the workers' own, so only the most recent are kept. On the remote workers' event
 * loop only.
 */
final class WorkerRegistry {

    /** Workers remembered at most; past it, the one heard from longest ago is forgotten. */
    private static final int MOST = 10_000;

    private final Clock clock;
    private final Map<String, Seen> seen = new LinkedHashMap<>();

    WorkerRegistry(Clock clock) {
        this.clock = clock;
    }

    void saw(String worker, String queue) {
        seen.remove(worker);
        seen.put(worker, new Seen(worker, queue, clock.instant()));
        if (seen.size() > MOST) {
            seen.remove(seen.keySet().iterator().next());
        }
    }

    /** Every worker remembered, the least recent first, with the leases it holds through this node. */
    List<Worker> workers(Map<String, Integer> leases) {
        List<Worker> list = new ArrayList<>(seen.size());
        seen.values().forEach(s -> list.add(new Worker(s.name, s.queue, leases.getOrDefault(s.name, 0), s.lastSeen)));
        return list;
    }

    private record Seen(String name, String queue, Instant lastSeen) {}
}
