package dev.taskline.journal;

import dev.taskline.model.QueueControl;
import io.vertx.core.Future;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;

/** What operators have set on queues (migration 000009), shared by every node on the journal. */
public final class JournalControls {

    private final Pool pool;
    private final Sql sql;
    private final Clock clock;

    public JournalControls(Pool pool, Clock clock) {
        this.pool = pool;
        this.sql = Sql.queries();
        this.clock = clock;
    }

    /** Pauses or resumes {@code queue} for {@code by} (a key id, or null). Asking for the state it is in changes nothing. */
    public Future<Void> setPaused(String queue, boolean paused, String by) {
        Sql.Statement set = sql.statement("queue_pause_set");
        return JournalFailures.guard(pool.preparedQuery(set.text())
                        .execute(set.bind(
                                "queue", queue, "paused", paused, "now", Times.utc(clock.instant()), "changed_by", by)))
                .mapEmpty();
    }

    /** Every queue something was set on, whatever its name (a node skips those it does not serve). */
    public Future<List<QueueControl>> controls() {
        return JournalFailures.guard(
                        pool.preparedQuery(sql.get("queue_controls")).execute())
                .map(rows -> {
                    List<QueueControl> controls = new ArrayList<>(rows.size());
                    for (Row row : rows) {
                        controls.add(new QueueControl(
                                row.getString("queue"),
                                row.getBoolean("paused"),
                                row.getOffsetDateTime("changed_at").toInstant(),
                                row.getString("changed_by")));
                    }
                    return controls;
                });
    }
}
