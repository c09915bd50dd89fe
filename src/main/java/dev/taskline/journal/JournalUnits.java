package dev.taskline.journal;

import io.vertx.core.Future;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.logging.Logger;

/**
 * The journal's units (migration 000030): each holds the finished tasks created within one interval
 * of time, with their events, in tables of its own. Units are made ahead of the clock and, past
 * retention, dropped whole; what their tasks left in tables that are not split by unit (steps,
 * signals, edges, flows, batches) goes after, a bounded batch at a time.
 */
public final class JournalUnits {

    private static final Logger LOG = Logger.getLogger(JournalUnits.class.getName());

    private final Pool pool;
    private final Sql sql;

    public JournalUnits(Pool pool) {
        this.pool = pool;
        this.sql = Sql.queries();
    }

    /** Makes the units of {@code every} that cover {@code from} to {@code to} where none is yet; how many it made. */
    public Future<Integer> make(Instant from, Instant to, Duration every) {
        Sql.Statement make = sql.statement("units_make");
        return JournalFailures.guard(pool.preparedQuery(make.text())
                        .execute(make.bind("from", Times.utc(from), "to", Times.utc(to), "every_ms", every.toMillis())))
                .map(rows -> rows.iterator().next().getInteger("made"));
    }

    /**
     * Drops (or, with {@code archive}, detaches) the tables of up to {@code most} units that ended
     * before {@code cutoff} and hold nothing that ended after it; how many went. A unit that must
     * stay (a task in it not finished, or finished late, or of a flow still running) is tried again at
     * the next pass; a drop that could not have its lock within a second too.
     */
    public Future<Integer> dropDue(Instant cutoff, boolean archive, int most) {
        Sql.Statement due = sql.statement("units_due");
        return JournalFailures.guard(
                        pool.preparedQuery(due.text()).execute(due.bind("cutoff", Times.utc(cutoff), "most", most)))
                .compose(rows -> {
                    List<Instant> starts = new ArrayList<>();
                    for (Row row : rows) {
                        starts.add(row.getOffsetDateTime("starts").toInstant());
                    }
                    return dropEach(starts, 0, cutoff, archive, 0);
                });
    }

    private Future<Integer> dropEach(List<Instant> starts, int index, Instant cutoff, boolean archive, int dropped) {
        if (index == starts.size()) {
            return Future.succeededFuture(dropped);
        }
        Sql.Statement drop = sql.statement("unit_drop");
        Instant unit = starts.get(index);
        return JournalFailures.guard(pool.preparedQuery(drop.text())
                        .execute(drop.bind("starts", Times.utc(unit), "cutoff", Times.utc(cutoff), "archive", archive)))
                .map(rows -> {
                    String stays = rows.iterator().next().getString("stays");
                    if (stays != null) {
                        LOG.fine(() -> "the unit of " + unit + " stays: " + stays);
                    }
                    return stays == null ? 1 : 0;
                })
                // A unit whose lock was not had in time is no reason to leave the others.
                .recover(e -> {
                    LOG.warning("could not drop the unit of " + unit + " now: " + e.getMessage());
                    return Future.succeededFuture(0);
                })
                .compose(n -> dropEach(starts, index + 1, cutoff, archive, dropped + n));
    }

    /**
     * Deletes a batch of up to {@code most} rows of each table that dropped units left behind, and
     * forgets each dropped unit none of whose rows are left, up to {@code units} of them; how many rows
     * it deleted.
     */
    public Future<Integer> cleanDropped(Instant cutoff, int most, int units) {
        Sql.Statement dropped = sql.statement("units_dropped");
        return JournalFailures.guard(pool.preparedQuery(dropped.text()).execute(dropped.bind("most", units)))
                .compose(rows -> {
                    List<Row> list = new ArrayList<>();
                    rows.forEach(list::add);
                    return cleanEach(list, 0, cutoff, most);
                });
    }

    private Future<Integer> cleanEach(List<Row> units, int index, Instant cutoff, int most) {
        if (index == units.size()) {
            return Future.succeededFuture(0);
        }
        Row unit = units.get(index);
        Sql.Statement leftovers = sql.statement("unit_leftovers");
        return JournalFailures.guard(pool.preparedQuery(leftovers.text())
                        .execute(leftovers.bind(
                                "lo",
                                unit.getUUID("lo"),
                                "hi",
                                unit.getUUID("hi"),
                                "cutoff",
                                Times.utc(cutoff),
                                "most",
                                most)))
                .compose(deleted -> {
                    int n = deleted.iterator().next().getLong("deleted").intValue();
                    if (n > 0) {
                        // A batch is this pass's share; the rest of this unit waits for the next.
                        return Future.succeededFuture(n);
                    }
                    Sql.Statement forget = sql.statement("unit_forget");
                    return JournalFailures.guard(pool.preparedQuery(forget.text())
                                    .execute(forget.bind(
                                            "starts",
                                            Times.utc(unit.getOffsetDateTime("starts")
                                                    .toInstant()))))
                            .compose(v -> cleanEach(units, index + 1, cutoff, most));
                });
    }
}
