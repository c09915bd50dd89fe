package dev.taskline.journal;

import static dev.taskline.testing.TestNode.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.taskline.testing.TestPostgres;
import io.vertx.core.Vertx;
import io.vertx.pgclient.PgBuilder;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.PoolOptions;
import io.vertx.sqlclient.Row;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** What the migrations leave on {@code tasks} that the write path depends on. */
class JournalSchemaTest {

    /**
     * PostgreSQL makes an update HOT (no new index entries) only when it changes no column that any
     * index names, in its key or its predicate. A progress report writes the progress and
     * updated_at and nothing else: an index that names one of them would cost every running task an
     * index entry in every index at every report.
     */
    @Test
    void no_index_names_what_a_progress_report_writes() throws Exception {
        Vertx vertx = Vertx.vertx();
        try {
            Pool pool = PgBuilder.pool()
                    .with(new PoolOptions().setMaxSize(1))
                    .connectingTo(JournalConnections.options(TestPostgres.newDatabase()))
                    .using(vertx)
                    .build();
            await(Migrator.migrate(vertx, pool));
            List<String> definitions = new ArrayList<>();
            for (Row row : await(pool.query("SELECT pg_get_indexdef(indexrelid) AS def FROM pg_index "
                            + "WHERE indrelid IN ('tasks_live'::regclass, 'tasks_done'::regclass)")
                    .execute())) {
                definitions.add(row.getString("def"));
            }
            assertTrue(definitions.size() > 3, "the task tables' indexes were read: " + definitions);
            for (String column : List.of("updated_at", "progress_percent", "progress_message")) {
                assertEquals(
                        List.of(),
                        definitions.stream().filter(d -> d.contains(column)).toList(),
                        "indexes naming " + column);
            }
        } finally {
            await(vertx.close());
        }
    }
}
