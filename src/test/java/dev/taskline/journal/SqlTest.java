package dev.taskline.journal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vertx.sqlclient.Tuple;
import java.util.List;
import org.junit.jupiter.api.Test;

class SqlTest {

    @Test
    void each_named_block_runs_to_the_next_name_line() {
        Sql sql = Sql.parse("""
        -- name: first
        SELECT 1
          FROM a;

        -- name: second
        SELECT 2 FROM b
        """);
        assertEquals("SELECT 1\n  FROM a", sql.get("first"));
        assertEquals("SELECT 2 FROM b", sql.get("second"));
    }

    @Test
    void text_before_the_first_name_line_belongs_to_no_statement() {
        Sql sql = Sql.parse("""
        -- a file header that explains the file
        SET something_global;
        -- name: only
        SELECT 1;
        """);
        assertEquals("SELECT 1", sql.get("only"));
    }

    @Test
    void a_trailing_semicolon_is_dropped_because_prepared_statements_refuse_it() {
        Sql sql = Sql.parse("-- name: q\nSELECT 1;\n   \n");
        assertEquals("SELECT 1", sql.get("q"));
    }

    @Test
    void only_the_last_semicolon_is_dropped() {
        Sql sql = Sql.parse("-- name: q\nSELECT ';' AS s;;\n");
        assertEquals("SELECT ';' AS s;", sql.get("q"));
    }

    @Test
    void comment_lines_inside_a_block_are_dropped() {
        Sql sql = Sql.parse("""
        -- name: q
        -- :id the id
        SELECT *
            -- an indented comment is a comment too
          FROM t
         WHERE id = :id;
        """);
        String statement = sql.get("q");
        assertFalse(statement.contains("--"), statement);
        assertEquals("SELECT *\n  FROM t\n WHERE id = $1", statement);
    }

    @Test
    void windows_line_endings_parse_like_unix_ones() {
        Sql sql = Sql.parse("-- name: q\r\nSELECT 1;\r\n-- name: r\r\nSELECT 2;\r\n");
        assertEquals("SELECT 1", sql.get("q"));
        assertEquals("SELECT 2", sql.get("r"));
    }

    @Test
    void a_name_defined_twice_is_rejected() {
        IllegalStateException e = assertThrows(
                IllegalStateException.class, () -> Sql.parse("-- name: q\nSELECT 1;\n-- name: q\nSELECT 2;\n"));
        assertTrue(e.getMessage().contains("'q'"), e.getMessage());
    }

    @Test
    void asking_for_an_unknown_name_fails_loudly() {
        Sql sql = Sql.parse("-- name: q\nSELECT 1;\n");
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> sql.get("nope"));
        assertTrue(e.getMessage().contains("'nope'"), e.getMessage());
    }

    @Test
    void a_missing_resource_fails_loudly() {
        assertThrows(IllegalStateException.class, () -> Sql.load("/sql/queries/no-such-file.sql"));
    }

    @Test
    void the_packaged_task_queries_load_with_every_statement_the_journal_uses() {
        Sql sql = Sql.load("/sql/queries/tasks.sql");
        for (String name : new String[] {
            "insert_tasks",
            "claim",
            "finish",
            "heartbeat",
            "progress",
            "release_expired",
            "page_in",
            "get_task",
            "task_history",
            "list_tasks",
            "get_batch",
            "batch_tasks",
            "ping"
        }) {
            String statement = sql.get(name);
            assertFalse(statement.isBlank(), name);
            assertFalse(statement.endsWith(";"), name + " still ends with a semicolon");
            assertFalse(statement.contains("-- name:"), name + " swallowed the next block");
        }
        assertTrue(sql.get("claim").startsWith("WITH req AS"), sql.get("claim"));
        assertTrue(sql.get("page_in").endsWith("FOR UPDATE SKIP LOCKED"), sql.get("page_in"));
    }

    @Test
    void named_parameters_are_numbered_in_the_order_they_first_appear_and_a_name_used_twice_is_one() {
        Sql.Statement q = Sql.parse("-- name: q\nSELECT * FROM t WHERE at > :now AND id = :id AND at < :now + 1;\n")
                .statement("q");
        assertEquals("SELECT * FROM t WHERE at > $1 AND id = $2 AND at < $1 + 1", q.text());
        assertEquals(List.of("now", "id"), q.params());
    }

    @Test
    void casts_quoted_texts_and_names_and_comments_are_not_parameters() {
        Sql.Statement q = Sql.parse(
                        "-- name: q\nSELECT :ids::uuid[], 'rate:queue', \"a:b\", 'it''s :not' -- :nor this\n FROM t;\n")
                .statement("q");
        assertEquals("SELECT $1::uuid[], 'rate:queue', \"a:b\", 'it''s :not' -- :nor this\n FROM t", q.text());
        assertEquals(List.of("ids"), q.params());
    }

    @Test
    void a_numbered_parameter_is_refused_so_that_no_statement_mixes_the_two() {
        IllegalStateException e =
                assertThrows(IllegalStateException.class, () -> Sql.parse("-- name: q\nSELECT $1, :b;\n"));
        assertTrue(e.getMessage().contains("'q'"), e.getMessage());
    }

    @Test
    void a_statement_is_bound_by_name_whatever_order_the_names_are_given_in() {
        Sql.Statement q = Sql.parse("-- name: q\nSELECT :a, :b;\n").statement("q");
        Tuple bound = q.bind("b", 2, "a", 1);
        assertEquals(1, bound.getInteger(0));
        assertEquals(2, bound.getInteger(1));
        Tuple withNull = q.bind("a", null, "b", 2);
        assertNull(withNull.getValue(0));
    }

    @Test
    void a_name_missing_unknown_or_given_twice_is_refused() {
        Sql.Statement q = Sql.parse("-- name: q\nSELECT :a, :b;\n").statement("q");
        assertThrows(IllegalArgumentException.class, () -> q.bind("a", 1));
        assertThrows(IllegalArgumentException.class, () -> q.bind("a", 1, "c", 2));
        assertThrows(IllegalArgumentException.class, () -> q.bind("a", 1, "a", 2));
    }

    @Test
    void a_statement_of_more_than_four_parameters_is_not_bound_loose() {
        Sql.Statement q = Sql.parse("-- name: q\nSELECT :a, :b, :c, :d, :e;\n").statement("q");
        assertThrows(IllegalStateException.class, () -> q.bind("a", 1, "b", 2, "c", 3, "d", 4, "e", 5));
    }

    @Test
    void a_record_component_is_its_parameter_in_snake_case() {
        assertEquals("lease_versions", Sql.Bound.snakeCase("leaseVersions"));
        assertEquals("rate_per_ms", Sql.Bound.snakeCase("ratePerMs"));
        assertEquals("ids", Sql.Bound.snakeCase("ids"));
    }
}
