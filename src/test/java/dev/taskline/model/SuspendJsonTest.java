package dev.taskline.model;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.taskline.model.problem.InvalidTaskException;
import io.vertx.core.json.JsonObject;
import java.time.Instant;
import org.junit.jupiter.api.Test;

/**
 * An event wait's name, field and value are one row of an index: past its size PostgreSQL refused the
 * row, and the attempt could end neither suspended nor otherwise. Held to 200 characters each, from
 * every door (a remote worker's or push target's suspend, a local handler's wait).
 */
class SuspendJsonTest {

    private static JsonObject suspend(Object value) {
        return new JsonObject()
                .put(
                        "event",
                        new JsonObject()
                                .put("name", "order.paid")
                                .put("field", "data.orderId")
                                .put("value", value));
    }

    @Test
    void an_event_wait_s_value_is_at_most_two_hundred_characters() {
        assertEquals(
                "x".repeat(200), SuspendJson.parse(suspend("x".repeat(200))).value());
        assertEquals("42", SuspendJson.parse(suspend(42)).value());
        InvalidTaskException refused =
                assertThrows(InvalidTaskException.class, () -> SuspendJson.parse(suspend("x".repeat(201))));
        assertTrue(refused.getMessage().contains("suspend.event.value"), refused.getMessage());
    }

    @Test
    void a_wait_made_by_any_door_is_held_to_the_same_bounds() {
        Instant now = Instant.parse("2026-12-05T10:00:00Z");
        assertThrows(
                InvalidTaskException.class, () -> Wait.event("s", "order.paid", "data.id", "v".repeat(10_000), now));
        assertThrows(InvalidTaskException.class, () -> Wait.event("s", "n".repeat(201), "data.id", "v", now));
        assertThrows(InvalidTaskException.class, () -> Wait.signal("s", "", now));
        assertEquals("v", Wait.event("s", "order.paid", "data.id", "v", now).value());
    }
}
