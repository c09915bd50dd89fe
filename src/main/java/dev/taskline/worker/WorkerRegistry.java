package dev.taskline.worker;

import dev.taskline.worker.RemoteWorkers.Worker;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The remote workers this node has heard from (a claim, a write), with the queue and time of the
 * last, by tenant. Names are the workers' own, so only the most recent are kept; past the bound the
 * tenant holding the most names forgets its own oldest, so that a tenant claiming under ever new
 * names pushes out none but its own. On the remote workers' event loop only.
 */
final class WorkerRegistry {

    /** Workers remembered at most, over all tenants. */
    private static final int MOST = 10_000;

    private final Clock clock;
    /** By tenant ("" for none), each the least recent first. */
    private final Map<String, LinkedHashMap<String, Seen>> byTenant = new HashMap<>();

    private int held;

    WorkerRegistry(Clock clock) {
        this.clock = clock;
    }

    void saw(String tenant, String worker, String queue) {
        String owner = tenant == null ? "" : tenant;
        LinkedHashMap<String, Seen> seen = byTenant.computeIfAbsent(owner, t -> new LinkedHashMap<>());
        if (seen.remove(worker) == null) {
            held++;
        }
        seen.put(worker, new Seen(tenant, worker, queue, clock.instant()));
        if (held > MOST) {
            forgetOne();
        }
    }

    private void forgetOne() {
        String largest = null;
        int most = 0;
        for (Map.Entry<String, LinkedHashMap<String, Seen>> tenant : byTenant.entrySet()) {
            if (tenant.getValue().size() > most) {
                largest = tenant.getKey();
                most = tenant.getValue().size();
            }
        }
        LinkedHashMap<String, Seen> seen = byTenant.get(largest);
        seen.remove(seen.keySet().iterator().next());
        if (seen.isEmpty()) {
            byTenant.remove(largest);
        }
        held--;
    }

    /** Every worker remembered, the least recent first, with the leases it holds through this node. */
    List<Worker> workers(Map<String, Integer> leases) {
        List<Worker> list = new ArrayList<>(held);
        byTenant.values()
                .forEach(seen -> seen.values()
                        .forEach(s -> list.add(
                                new Worker(s.name, s.queue, leases.getOrDefault(s.name, 0), s.lastSeen, s.tenant))));
        list.sort(Comparator.comparing(Worker::lastSeen));
        return list;
    }

    private record Seen(String tenant, String name, String queue, Instant lastSeen) {}
}
