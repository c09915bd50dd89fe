package dev.taskline.workflow;

import dev.taskline.journal.JournalFlows;
import dev.taskline.model.BlockedCounts;
import dev.taskline.model.BlockedTasks;
import dev.taskline.model.problem.TooManyBlockedException;
import io.vertx.core.Future;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The journal's blocked tasks, as this node judges them: the count last read from the journal
 * (every node's flows), plus what this node admitted since. Three bounds read it: the journal-wide
 * {@code flows.maxBlocked}; a tenant's share of it ({@code http.tenantShare}), so that one tenant's
 * delayed flows cannot refuse every other tenant's; and each queue's {@code tenantLimit}, which
 * counts a tenant's blocked tasks in that queue with its waiting and running ones. A count per flow would read every blocked
 * task at each submission; read every few seconds, a bound may be passed by what other nodes
 * admitted meanwhile (or counted against a little longer than its tasks stay blocked), which for
 * bounds of this kind is no matter.
 */
public final class BlockedCount implements BlockedTasks {

    private final JournalFlows journal;
    private final long max;
    private final long tenantMax;
    private volatile BlockedCounts read = BlockedCounts.NONE;
    private final AtomicLong since = new AtomicLong();
    /** Admitted since the last read, by queue and tenant (the key joins them with a NUL). */
    private final Map<String, AtomicInteger> sinceByTenant = new ConcurrentHashMap<>();

    /** {@code tenantMax}: the most one tenant may hold blocked at once (tasks of no tenant: {@code max} alone). */
    public BlockedCount(JournalFlows journal, long max, long tenantMax) {
        this.journal = journal;
        this.max = max;
        this.tenantMax = tenantMax;
    }

    /** Whether {@code n} more blocked tasks of {@code tenant} (null: none) fit. */
    boolean room(int n, String tenant) {
        return read.total() + since.get() + n <= max && (tenant == null || ofTenant(tenant) + n <= tenantMax);
    }

    TooManyBlockedException refusal(int n, String tenant) {
        long all = read.total() + since.get();
        if (all + n <= max && tenant != null) {
            return new TooManyBlockedException(tenantMax, ofTenant(tenant), n, tenant);
        }
        return new TooManyBlockedException(max, all, n, null);
    }

    private long ofTenant(String tenant) {
        long n = read.ofTenant(tenant);
        for (Map.Entry<String, AtomicInteger> e : sinceByTenant.entrySet()) {
            if (e.getKey().endsWith('\0' + tenant)) {
                n += e.getValue().get();
            }
        }
        return n;
    }

    @Override
    public int of(String queue, String tenant) {
        AtomicInteger more = sinceByTenant.get(key(queue, tenant));
        return read.of(queue, tenant) + (more == null ? 0 : more.get());
    }

    /** {@code byQueue}: of the blocked tasks admitted, how many in each queue, all of {@code tenant} (null: none). */
    void admitted(int n, String tenant, Map<String, Integer> byQueue) {
        since.addAndGet(n);
        if (tenant != null) {
            byQueue.forEach((queue, k) -> sinceByTenant
                    .computeIfAbsent(key(queue, tenant), x -> new AtomicInteger())
                    .addAndGet(k));
        }
    }

    /** Reads the counts anew; what was admitted before the read is in them. */
    public Future<Void> runOnce() {
        long before = since.get();
        Map<String, Integer> beforeByTenant = new HashMap<>();
        sinceByTenant.forEach((key, n) -> beforeByTenant.put(key, n.get()));
        return journal.blockedCount().map(counts -> {
            read = counts;
            since.addAndGet(-before);
            // Entries stay at zero rather than go: one a queue and tenant that had flows here.
            beforeByTenant.forEach((key, n) -> sinceByTenant.get(key).addAndGet(-n));
            return null;
        });
    }

    private static String key(String queue, String tenant) {
        return queue + '\0' + tenant;
    }
}
