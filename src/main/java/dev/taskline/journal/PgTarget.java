package dev.taskline.journal;

import io.vertx.pgclient.PgConnectOptions;
import java.util.List;
import java.util.Locale;

/**
 * The servers a journal URL names, in its order, and what a session on one must be for the node to
 * take it (libpq's {@code target_session_attrs}).
 *
 * @param connectTimeoutMs how long a connection to one server may take before the next is tried
 */
public record PgTarget(List<PgConnectOptions> servers, Session session, int connectTimeoutMs) {

    /** A URL names at most this many hosts. */
    public static final int MOST_SERVERS = 16;

    /** libpq's default waits for ever; a failover must not wait on a host that is gone without a word. */
    public static final int DEFAULT_CONNECT_TIMEOUT_MS = 5_000;

    public PgTarget {
        servers = List.copyOf(servers);
    }

    /** Whether a connection must be checked before it is used: there is a choice, or a condition. */
    public boolean mustChoose() {
        return servers.size() > 1 || session != Session.ANY;
    }

    /** What a session must be on a server for the node to take it. */
    public enum Session {
        /** Any server that accepts the connection. */
        ANY,
        /** One whose transactions may write (libpq's read-write; also what a primary is). */
        READ_WRITE,
        /** One not in recovery. */
        PRIMARY,
        /** One whose transactions are read-only. */
        READ_ONLY,
        /** One in recovery. */
        STANDBY,
        /** A standby if any answers, else any. */
        PREFER_STANDBY;

        static Session of(String value) {
            if (value == null || value.isEmpty()) {
                return ANY;
            }
            try {
                return valueOf(value.toUpperCase(Locale.ROOT).replace('-', '_'));
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("target_session_attrs must be one of any, read-write, primary,"
                        + " read-only, standby, prefer-standby; not " + value);
            }
        }

        /** Whether a server in this state will do ({@code preferring}: a first pass of prefer-standby). */
        boolean takes(boolean inRecovery, boolean readOnly, boolean preferring) {
            return switch (this) {
                case ANY -> true;
                case READ_WRITE -> !readOnly;
                case PRIMARY -> !inRecovery;
                case READ_ONLY -> readOnly;
                case STANDBY -> inRecovery;
                case PREFER_STANDBY -> !preferring || inRecovery;
            };
        }
    }
}
