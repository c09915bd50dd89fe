package dev.taskline.workflow;

import dev.taskline.journal.JournalFlows;
import dev.taskline.model.problem.TooManyBlockedException;
import io.vertx.core.Future;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The journal-wide bound on blocked tasks ({@code flows.maxBlocked}), as this node judges it: the
 * count last read from the journal (every node's flows), plus what this node admitted since. A
 * count per flow would read every blocked task at each submission; read every few seconds, the
 * bound may be passed by what other nodes admitted meanwhile, which for a bound of this size (a
 * million by default) is no matter.
 */
public final class BlockedCount {

    private final JournalFlows journal;
    private final long max;
    private volatile long read;
    private final AtomicLong since = new AtomicLong();

    public BlockedCount(JournalFlows journal, long max) {
        this.journal = journal;
        this.max = max;
    }

    /** Whether {@code n} more blocked tasks fit. */
    boolean room(int n) {
        return read + since.get() + n <= max;
    }

    TooManyBlockedException refusal(int n) {
        return new TooManyBlockedException(max, read + since.get(), n);
    }

    void admitted(int n) {
        since.addAndGet(n);
    }

    /** Reads the count anew; what was admitted before the read is in it. */
    public Future<Void> runOnce() {
        long before = since.get();
        return journal.blockedCount().map(count -> {
            read = count;
            since.addAndGet(-before);
            return null;
        });
    }
}
