package dev.taskline.admission;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.taskline.model.problem.InvalidTaskException;
import dev.taskline.model.problem.QueueFullException;
import dev.taskline.model.problem.TooManyBlockedException;
import io.vertx.core.Future;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** Where each kind of Idempotency-Key lives, what a key may hold, and when a twin's answer is the request's. */
class IdempotencyKeysTest {

    @Test
    void no_kind_or_tenant_reaches_into_another_s_namespace() {
        // Tenant names are [A-Za-z0-9._:@-]: "flow" and "trigger" are names a tenant may take.
        Set<String> keys = new HashSet<>();
        for (Idempotency.Kind kind : Idempotency.Kind.values()) {
            for (String tenant : new String[] {null, "flow", "trigger", "acme"}) {
                for (String key : List.of("x", "flow", "acme")) {
                    String journalKey = Idempotency.journalKey(kind, tenant, key);
                    assertEquals(true, keys.add(journalKey), "one place for " + kind + "/" + tenant + "/" + key);
                }
            }
        }
        assertNotEquals(
                Idempotency.journalKey(Idempotency.Kind.TASKS, "flow", "x"),
                Idempotency.journalKey(Idempotency.Kind.FLOW, null, "x"));
    }

    @Test
    void task_keys_keep_the_form_that_live_keys_have_across_an_upgrade() {
        assertEquals("order-1", Idempotency.journalKey(Idempotency.Kind.TASKS, null, "order-1"));
        assertEquals("acme\u0001order-1", Idempotency.journalKey(Idempotency.Kind.TASKS, "acme", "order-1"));
    }

    @Test
    void a_key_holds_1_to_255_characters_and_no_control_character() {
        Idempotency.check(null);
        Idempotency.check("order-1");
        Idempotency.check("x".repeat(255));
        for (String bad : List.of("", " ", "x".repeat(256), "a\u0001b", "a\u0002b", "a\nb", "a\u0000b", "a\u007fb")) {
            InvalidTaskException e = assertThrows(InvalidTaskException.class, () -> Idempotency.check(bad));
            assertEquals(422, e.status());
        }
    }

    @Test
    void a_refusal_for_room_gives_way_to_the_twin_s_answer_and_no_other_does() throws Exception {
        QueueFullException full = new QueueFullException("q", 5, 5, 1, 1);
        assertEquals(
                "twin",
                Idempotency.orTwin(Future.<String>failedFuture(full), () -> Future.succeededFuture("twin"))
                        .result());
        Future<String> none = Idempotency.orTwin(Future.failedFuture(full), () -> Future.succeededFuture(null));
        assertSame(full, none.cause(), "no twin: the refusal stands");
        TooManyBlockedException blocked = new TooManyBlockedException(10, 10, 1, "acme");
        assertEquals(
                "twin",
                Idempotency.orTwin(Future.<String>failedFuture(blocked), () -> Future.succeededFuture("twin"))
                        .result(),
                "a flow refused for blocked room, as a task for queue room");
        InvalidTaskException invalid = new InvalidTaskException("bad");
        assertSame(
                invalid,
                Idempotency.orTwin(Future.<String>failedFuture(invalid), () -> Future.succeededFuture("twin"))
                        .cause());
    }
}
