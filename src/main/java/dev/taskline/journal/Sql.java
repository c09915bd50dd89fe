package dev.taskline.journal;

import io.vertx.sqlclient.Tuple;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.RecordComponent;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Named SQL statements read from {@code sql/queries/*.sql} on the classpath. A block starts with a
 * line {@code -- name: some_name} and runs to the next such line. Statements name their parameters
 * ({@code :queue}, {@code :lease_versions}); each is numbered once here, in the order the names
 * first appear, into the {@code $1, $2, ...} that PostgreSQL takes, a name used twice being one
 * parameter. A statement with more than {@link #MOST_LOOSE} parameters is bound through a record
 * of its own whose components bear its names (see {@link Params}); the others by name and value.
 */
final class Sql {

    /** Parameters a statement may take bound by name and value; past it, through a record. */
    static final int MOST_LOOSE = 4;

    private final Map<String, Statement> statements;

    private Sql(Map<String, Statement> statements) {
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
                "/sql/queries/schedules.sql",
                "/sql/queries/flows.sql",
                "/sql/queries/steps.sql",
                "/sql/queries/migrations.sql",
                "/sql/queries/nodes.sql",
                "/sql/queries/units.sql");
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
        Map<String, Statement> found = new HashMap<>();
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

    private static void put(Map<String, Statement> found, String name, StringBuilder body) {
        if (name == null) {
            return;
        }
        String statement = body.toString().trim();
        if (statement.endsWith(";")) {
            statement = statement.substring(0, statement.length() - 1);
        }
        if (found.put(name, Statement.numbered(name, statement)) != null) {
            throw new IllegalStateException("SQL statement '" + name + "' is defined twice");
        }
    }

    /** The statement named {@code name}. */
    Statement statement(String name) {
        Statement statement = statements.get(name);
        if (statement == null) {
            throw new IllegalStateException("no SQL statement named '" + name + "'");
        }
        return statement;
    }

    /** The text of the statement named {@code name}, numbered for PostgreSQL. */
    String get(String name) {
        return statement(name).text();
    }

    /**
     * The statement named {@code name}, bound through {@code params}: the record {@link Params}
     * names for it, whose components must be its parameters (a component {@code leaseVersions}
     * is the parameter {@code :lease_versions}), every one and no other.
     */
    <P extends Record> Bound<P> bound(String name, Class<P> params) {
        Class<? extends Record> declared = Params.FOR_STATEMENT.get(name);
        if (declared != params) {
            throw new IllegalStateException("statement '" + name + "' is bound through "
                    + (declared == null ? "no record" : declared.getSimpleName()) + ", not " + params.getSimpleName());
        }
        return new Bound<>(statement(name), params);
    }

    /** Every statement, for the test that holds them to their records. */
    Collection<Statement> all() {
        return statements.values();
    }

    /** A statement as PostgreSQL takes it, with the names its numbered parameters had. */
    record Statement(String name, String text, List<String> params) {

        /**
         * {@code sql} with each {@code :name} replaced by its number. Casts ({@code ::}), quoted
         * texts and names, and comments are passed over; a {@code $1} of old is refused, so that no
         * statement mixes the two.
         */
        static Statement numbered(String name, String sql) {
            StringBuilder out = new StringBuilder(sql.length());
            Map<String, Integer> numbers = new HashMap<>();
            List<String> params = new ArrayList<>();
            int i = 0;
            while (i < sql.length()) {
                char c = sql.charAt(i);
                if (c == '\'' || c == '"') {
                    int end = sql.indexOf(c, i + 1);
                    while (end > 0 && end + 1 < sql.length() && sql.charAt(end + 1) == c) {
                        end = sql.indexOf(c, end + 2); // a doubled quote stands for one
                    }
                    end = end < 0 ? sql.length() : end + 1;
                    out.append(sql, i, end);
                    i = end;
                } else if (c == '-' && sql.startsWith("--", i)) {
                    int end = sql.indexOf('\n', i);
                    end = end < 0 ? sql.length() : end;
                    out.append(sql, i, end);
                    i = end;
                } else if (c == ':' && i + 1 < sql.length() && sql.charAt(i + 1) == ':') {
                    out.append("::");
                    i += 2;
                } else if (c == ':' && i + 1 < sql.length() && startsName(sql.charAt(i + 1))) {
                    int end = i + 1;
                    while (end < sql.length() && inName(sql.charAt(end))) {
                        end++;
                    }
                    String param = sql.substring(i + 1, end);
                    Integer number = numbers.get(param);
                    if (number == null) {
                        params.add(param);
                        number = params.size();
                        numbers.put(param, number);
                    }
                    out.append('$').append(number);
                    i = end;
                } else if (c == '$' && i + 1 < sql.length() && Character.isDigit(sql.charAt(i + 1))) {
                    throw new IllegalStateException("SQL statement '" + name + "' numbers a parameter ($"
                            + sql.charAt(i + 1) + "...): name it (:name) instead");
                } else {
                    out.append(c);
                    i++;
                }
            }
            return new Statement(name, out.toString(), List.copyOf(params));
        }

        private static boolean startsName(char c) {
            return (c >= 'a' && c <= 'z') || c == '_';
        }

        private static boolean inName(char c) {
            return startsName(c) || (c >= '0' && c <= '9');
        }

        /**
         * The parameters given as names and values in turn ({@code "queue", q, "now", now}), in the
         * statement's order: every one of its parameters, once, and no other.
         */
        Tuple bind(Object... namesAndValues) {
            if (params.size() > MOST_LOOSE) {
                throw new IllegalStateException(
                        "statement '" + name + "' takes " + params.size() + " parameters: bind it through its record");
            }
            if (namesAndValues.length != 2 * params.size()) {
                throw new IllegalArgumentException("statement '" + name + "' takes " + params + ", given "
                        + namesAndValues.length / 2 + " values");
            }
            Object[] values = new Object[params.size()];
            boolean[] given = new boolean[params.size()];
            for (int i = 0; i < namesAndValues.length; i += 2) {
                int at = params.indexOf(namesAndValues[i]);
                if (at < 0 || given[at]) {
                    throw new IllegalArgumentException("statement '" + name + "' takes " + params + ", not "
                            + (at < 0 ? "" : "twice ") + namesAndValues[i]);
                }
                given[at] = true;
                values[at] = namesAndValues[i + 1];
            }
            return Tuple.wrap(values);
        }
    }

    /** A statement bound through a record: each component read into the parameter of its name. */
    static final class Bound<P extends Record> {

        private final Statement statement;
        /** The record's accessors, in the order of the statement's parameters. */
        private final Method[] accessors;

        private Bound(Statement statement, Class<P> params) {
            this.statement = statement;
            Map<String, Method> byParam = new HashMap<>();
            for (RecordComponent component : params.getRecordComponents()) {
                byParam.put(snakeCase(component.getName()), component.getAccessor());
            }
            Set<String> wanted = new LinkedHashSet<>(statement.params());
            if (!wanted.equals(byParam.keySet())) {
                Set<String> missing = new LinkedHashSet<>(wanted);
                missing.removeAll(byParam.keySet());
                Set<String> extra = new LinkedHashSet<>(byParam.keySet());
                extra.removeAll(wanted);
                throw new IllegalStateException("statement '" + statement.name() + "' and " + params.getSimpleName()
                        + " disagree: the record lacks " + missing + " and has " + extra + " besides");
            }
            accessors = new Method[statement.params().size()];
            for (int i = 0; i < accessors.length; i++) {
                accessors[i] = byParam.get(statement.params().get(i));
                accessors[i].setAccessible(true);
            }
        }

        String text() {
            return statement.text();
        }

        Tuple bind(P params) {
            Object[] values = new Object[accessors.length];
            try {
                for (int i = 0; i < accessors.length; i++) {
                    values[i] = accessors[i].invoke(params);
                }
            } catch (IllegalAccessException | InvocationTargetException e) {
                throw new IllegalStateException(
                        "cannot read " + params.getClass().getSimpleName(), e);
            }
            return Tuple.wrap(values);
        }

        /** {@code leaseVersions} as its parameter: {@code lease_versions}. */
        static String snakeCase(String component) {
            StringBuilder name = new StringBuilder(component.length() + 4);
            for (char c : component.toCharArray()) {
                if (Character.isUpperCase(c)) {
                    name.append('_').append(Character.toLowerCase(c));
                } else {
                    name.append(c);
                }
            }
            return name.toString();
        }
    }
}
