package dev.taskline.journal;

import dev.taskline.model.LiveNode;
import dev.taskline.model.NodeEntry;
import dev.taskline.model.NodeRecord;
import io.vertx.core.Future;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.RowSet;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.Function;

/**
 * The node registry and the upkeep leases (migration 000020). Liveness and leases run on the
 * database's clock, so that nodes whose clocks differ agree on who is live and who holds a lease.
 */
public final class JournalNodes {

    private final Pool pool;
    private final Sql sql;

    public JournalNodes(Pool pool) {
        this.pool = pool;
        this.sql = Sql.queries();
    }

    /**
     * Journals {@code me} as live for {@code expiresMs}, with the config epoch {@code epochOf} gives
     * for the live nodes it finds; a failure it throws (a conflict) leaves nothing written. Two
     * nodes that register at once do so one after the other.
     */
    public Future<Long> register(NodeEntry me, long expiresMs, Function<List<LiveNode>, Long> epochOf) {
        Sql.Bound<Params.NodeRegister> insert = sql.bound("node_register", Params.NodeRegister.class);
        return JournalFailures.guard(pool.withTransaction(conn -> conn.query(sql.get("nodes_lock"))
                .execute()
                .compose(locked -> conn.query(sql.get("nodes_live")).execute())
                .compose(rows -> {
                    List<LiveNode> live = new ArrayList<>(rows.size());
                    for (Row row : rows) {
                        live.add(new LiveNode(
                                row.getString("id"),
                                row.getString("address"),
                                row.getOffsetDateTime("started_at").toInstant(),
                                row.getString("queues"),
                                row.getString("queues_hash"),
                                row.getLong("config_epoch")));
                    }
                    long epoch = epochOf.apply(live);
                    return conn.preparedQuery(insert.text())
                            .execute(insert.bind(new Params.NodeRegister(
                                    me.id(),
                                    me.version(),
                                    me.address(),
                                    expiresMs,
                                    me.queues(),
                                    me.queuesHash(),
                                    epoch)))
                            .map(epoch);
                })));
    }

    /**
     * Keeps the node's row live for {@code expiresMs} more; answers how many nodes are live, this one
     * among them, or -1 when the row was not there (gone long enough to be deleted): the caller
     * registers again.
     */
    public Future<Integer> heartbeat(String id, long expiresMs, int streams) {
        Sql.Statement beat = sql.statement("node_heartbeat");
        return JournalFailures.guard(pool.preparedQuery(beat.text())
                        .execute(beat.bind("id", id, "expires_ms", expiresMs, "streams", streams)))
                .map(rows -> rows.rowCount() == 0
                        ? -1
                        : rows.iterator().next().getLong("live").intValue());
    }

    /** Sets the address the registry shows for the node. */
    public Future<Void> address(String id, String address) {
        Sql.Statement set = sql.statement("node_address");
        return JournalFailures.guard(pool.preparedQuery(set.text()).execute(set.bind("id", id, "address", address)))
                .mapEmpty();
    }

    /** A clean stop: listed as gone at once, its leases let go. */
    public Future<Void> gone(String id) {
        Sql.Statement gone = sql.statement("node_gone");
        return JournalFailures.guard(pool.preparedQuery(gone.text()).execute(gone.bind("id", id)))
                .mapEmpty();
    }

    /** Live nodes, then those gone within {@code goneMs}. */
    public Future<List<NodeRecord>> list(long goneMs) {
        Sql.Statement list = sql.statement("nodes_list");
        return JournalFailures.guard(pool.preparedQuery(list.text()).execute(list.bind("gone_ms", goneMs)))
                .map(JournalNodes::records);
    }

    /** Deletes the rows of nodes gone longer than {@code goneMs}; how many went. */
    public Future<Integer> forget(long goneMs) {
        Sql.Statement forget = sql.statement("nodes_forget");
        return JournalFailures.guard(pool.preparedQuery(forget.text()).execute(forget.bind("gone_ms", goneMs)))
                .map(RowSet::rowCount);
    }

    /** Takes or renews the lease {@code name} for {@code leaseMs}: true when this node holds it now. */
    public Future<Boolean> takeLease(String name, String nodeId, long leaseMs) {
        Sql.Statement take = sql.statement("node_lease_take");
        return JournalFailures.guard(pool.preparedQuery(take.text())
                        .execute(take.bind("name", name, "node_id", nodeId, "lease_ms", leaseMs)))
                .map(rows -> rows.rowCount() > 0);
    }

    /** Tells the other nodes that due work of {@code queue} waits here that they may take. */
    public Future<Void> notifyDue(String queue) {
        Sql.Statement due = sql.statement("notify_due");
        return JournalFailures.guard(pool.preparedQuery(due.text()).execute(due.bind("queue", queue)))
                .mapEmpty();
    }

    private static List<NodeRecord> records(RowSet<Row> rows) {
        List<NodeRecord> nodes = new ArrayList<>(rows.size());
        for (Row row : rows) {
            String leases = row.getString("leases");
            nodes.add(new NodeRecord(
                    row.getString("id"),
                    row.getString("version"),
                    row.getString("address"),
                    instant(row.getOffsetDateTime("started_at")),
                    instant(row.getOffsetDateTime("seen_at")),
                    instant(row.getOffsetDateTime("expires_at")),
                    instant(row.getOffsetDateTime("gone_at")),
                    row.getString("queues_hash"),
                    row.getLong("config_epoch"),
                    row.getInteger("streams"),
                    row.getBoolean("live"),
                    leases == null ? List.of() : Arrays.asList(leases.split(",")),
                    instant(row.getOffsetDateTime("read_at"))));
        }
        return nodes;
    }

    private static Instant instant(OffsetDateTime time) {
        return time == null ? null : time.toInstant();
    }
}
