package dev.taskline.model;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.taskline.config.TasklineConfig;
import dev.taskline.model.problem.InvalidTaskException;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.time.Instant;
import org.junit.jupiter.api.Test;

/** The rules for what comes from outside: JSON the journal keeps and reads back, and instants. */
class StoredJsonTest {

    @Test
    void a_value_is_refused_past_its_size_to_the_byte_whether_it_is_encoded_to_be_sized_or_not() {
        java.util.List<Object> values = java.util.List.of(
                new JsonObject().put("control", "\u0001".repeat(100)).put("n", 1.0e-300),
                new JsonObject()
                        .put("q", "\"\\".repeat(50))
                        .put("list", new JsonArray().add(Long.MIN_VALUE).add(true)),
                new JsonObject()
                        .put("bytes", new byte[] {1, 2, 3, 4, 5})
                        .put("at", Instant.parse("2026-12-05T10:00:00.123456789Z"))
                        .put("big", new java.math.BigDecimal("1e400"))
                        .putNull("none"),
                new JsonArray().add("😀 héllo").add(new JsonObject().put("k", new JsonArray())));
        for (Object value : values) {
            int bytes = io.vertx.core.json.Json.encodeToBuffer(value).length();
            assertNull(StoredJson.flaw(value, "the result", bytes), value.toString());
            String refused = StoredJson.flaw(value, "the result", bytes - 1);
            assertTrue(refused != null && refused.contains(bytes + " bytes"), String.valueOf(refused));
        }
    }

    @Test
    void a_value_of_plain_json_has_no_flaw() {
        JsonObject value = new JsonObject()
                .put("text", "héllo 😀")
                .put("n", 1)
                .put("list", new JsonArray().add(true).addNull().add(1.5));
        assertNull(StoredJson.flaw(value, "the result"));
        assertNull(StoredJson.flaw(value, "the result", 1024));
    }

    @Test
    void each_flaw_is_named_with_where_it_is() {
        assertEquals(
                "payload.note contains the NUL character",
                StoredJson.flaw(new JsonObject().put("payload", new JsonObject().put("note", "a\0b")), "the body"));
        assertEquals(
                "a field name of steps contains the NUL character",
                StoredJson.flaw(new JsonObject().put("steps", new JsonObject().put("a\0", 1)), "the answer"));
        assertEquals(
                "list[1] contains a lone surrogate, which is no character",
                StoredJson.flaw(
                        new JsonObject().put("list", new JsonArray().add("ok").add("\uD800")), "x"));
        assertTrue(StoredJson.flaw(new JsonObject().put("k".repeat(StoredJson.MAX_NAME + 1), 1), "the result")
                .contains("longer than"));
        assertTrue(StoredJson.flaw(new JsonObject().put("thing", new Object()), "the result")
                .contains("no JSON value"));
        Object deep = 1;
        for (int i = 0; i <= StoredJson.MAX_DEPTH; i++) {
            deep = new JsonArray().add(deep);
        }
        assertTrue(StoredJson.flaw(deep, "the result").contains("levels deep"));
        assertTrue(StoredJson.flaw(new JsonObject().put("s", "x".repeat(2000)), "the result", 1000)
                .contains("more than the 1000"));
    }

    @Test
    void no_value_within_the_body_bound_can_hold_a_string_the_decoder_refuses() {
        assertTrue(TasklineConfig.MAX_BODY_LIMIT_BYTES < StoredJson.MAX_STRING);
    }

    @Test
    void an_instant_from_outside_is_read_within_range_and_a_wait_within_a_year() {
        assertEquals(Instant.parse("2026-12-01T08:00:00Z"), Instants.parse("2026-12-01T09:00:00+01:00", "runAt"));
        assertTrue(assertThrows(InvalidTaskException.class, () -> Instants.parse("tomorrow", "runAt"))
                .getMessage()
                .startsWith("runAt must be an ISO-8601 instant"));
        assertTrue(assertThrows(
                        InvalidTaskException.class,
                        () -> Instants.parse("+1000000000-01-01T00:00:00Z", "suspend.until"))
                .getMessage()
                .startsWith("suspend.until must be at most 9999-12-31T23:59:59Z"));
        assertTrue(assertThrows(InvalidTaskException.class, () -> Instants.parse("1969-12-31T23:59:59Z", "x"))
                .getMessage()
                .contains("at least 1970"));
        Instant now = Instant.parse("2026-12-01T00:00:00Z");
        assertNull(Instants.flaw(now.plus(Instants.MAX_AHEAD), now));
        assertTrue(
                Instants.flaw(now.plus(Instants.MAX_AHEAD).plusMillis(1), now).contains("a year"));
        assertTrue(assertThrows(
                        InvalidTaskException.class,
                        () -> new Suspend(
                                        "s",
                                        Wait.Kind.SLEEP,
                                        null,
                                        null,
                                        null,
                                        Instant.parse("2030-01-01T00:00:00Z"),
                                        null)
                                .at(now))
                .getMessage()
                .startsWith("suspend.until must be at most a year"));
    }
}
