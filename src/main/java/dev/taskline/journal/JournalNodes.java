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
     * Keeps the node's row live for {@code expiresMs} more; answers what it read of the others, or
     * null when the row was not there (gone long enough to be deleted): the caller registers again.
     */
    public Future<Beat> heartbeat(String id, long expiresMs, int streams, int connections) {
        Sql.Statement beat = sql.statement("node_heartbeat");
        return JournalFailures.guard(pool.preparedQuery(beat.text())
                        .execute(beat.bind(
                                "id", id, "expires_ms", expiresMs, "streams", streams, "connections", connections)))
                .map(rows -> {
                    if (rows.rowCount() == 0) {
                        return null;
                    }
                    Row row = rows.iterator().next();
                    return new Beat(row.getLong("live").intValue(), row.getBoolean("followed"));
                });
    }

    /** What a heartbeat read: the live nodes (this one among them), and whether another has streams open. */
    public record Beat(int live, boolean followed) {}

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

    /** Sends {@code payload} (a hint, never more) on {@code channel} to the nodes that listen. */
    public Future<Void> notify(String channel, String payload) {
        Sql.Statement notify = sql.statement("notify");
        return JournalFailures.guard(
                        pool.preparedQuery(notify.text()).execute(notify.bind("channel", channel, "payload", payload)))
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
                    row.getInteger("connections"),
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
