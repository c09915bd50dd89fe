package dev.taskline.journal;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;

/**
 * Named SQL statements read from {@code sql/queries/*.sql} on the classpath. A block starts with a
 * line {@code -- name: some_name} and runs to the next such line.
 */
final class Sql {

    private final Map<String, String> statements;

    private Sql(Map<String, String> statements) {
        this.statements = Map.copyOf(statements);
    }

    /** The node's named statements ({@code sql/queries}), read once for the writes and the reads alike. */
    static Sql queries() {
        return Queries.SQL;
    }

    private static final class Queries {
        static final Sql SQL = load(
                "/sql/queries/tasks.sql",
                "/sql/queries/events.sql",
                "/sql/queries/keys.sql",
                "/sql/queries/controls.sql",
                "/sql/queries/schedules.sql");
    }

    /** Reads packaged files; called once at start-up, before any event loop needs them. */
    static Sql load(String... resources) {
        StringBuilder text = new StringBuilder();
        for (String resource : resources) {
            try (InputStream in = Sql.class.getResourceAsStream(resource)) {
                if (in == null) {
                    throw new IllegalStateException("missing SQL resource " + resource);
                }
                text.append(new String(in.readAllBytes(), StandardCharsets.UTF_8))
                        .append('\n');
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
        return parse(text.toString());
    }

    static Sql parse(String text) {
        Map<String, String> found = new HashMap<>();
        String name = null;
        StringBuilder body = new StringBuilder();
        for (String line : text.split("\n", -1)) {
            String trimmed = line.trim();
            if (trimmed.startsWith("-- name:")) {
                put(found, name, body);
                name = trimmed.substring("-- name:".length()).trim();
                body.setLength(0);
            } else if (name != null && !trimmed.startsWith("--")) {
                body.append(line).append('\n');
            }
        }
        put(found, name, body);
        return new Sql(found);
    }

    private static void put(Map<String, String> found, String name, StringBuilder body) {
        if (name == null) {
            return;
        }
        String statement = body.toString().trim();
        if (statement.endsWith(";")) {
            statement = statement.substring(0, statement.length() - 1);
        }
        if (found.put(name, statement) != null) {
            throw new IllegalStateException("SQL statement '" + name + "' is defined twice");
        }
    }

    String get(String name) {
        String statement = statements.get(name);
        if (statement == null) {
            throw new IllegalStateException("no SQL statement named '" + name + "'");
        }
        return statement;
    }
}
