package dev.taskline.journal;

import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;

/**
 * What flow children's parents ended with, read by the statement that claimed them, until the
 * attempt asks for it ({@link JournalFlows#parents}): the claim passes it on instead of a second
 * round trip after it. Taken once; a claim whose attempt never asks (it was cancelled meanwhile)
 * leaves an entry, so past {@value #MOST} entries all are dropped (a cache, not a record), and an attempt
 * that finds none reads its parents from the journal as before.
 */
final class PrefetchedParents {

    static final int MOST = 10_000;

    private final Map<UUID, ParentsRow> rows = new ConcurrentHashMap<>();

    void put(UUID taskId, ParentsRow row) {
        if (rows.size() >= MOST) {
            rows.clear();
        }
        rows.put(taskId, row);
    }

    /** The row read for {@code taskId} with this bound, if any; it is no longer kept. */
    ParentsRow take(UUID taskId, long maxBytes) {
        ParentsRow row = rows.remove(taskId);
        return row != null && row.maxBytes() == maxBytes ? row : null;
    }
}
