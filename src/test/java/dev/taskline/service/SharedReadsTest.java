package dev.taskline.service;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.taskline.testing.MutableClock;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** A costly read per key is made once per second however many ask, shared while in flight, and not kept when failed. */
class SharedReadsTest {

    private final MutableClock clock = new MutableClock(Instant.parse("2026-12-05T10:00:00Z"));
    private final List<Promise<Integer>> made = new ArrayList<>();
    private final SharedReads<String, Integer> reads = new SharedReads<>(
            key -> {
                Promise<Integer> p = Promise.promise();
                made.add(p);
                return p.future();
            },
            Duration.ofSeconds(1),
            clock);

    @Test
    void callers_within_a_second_or_while_in_flight_share_one_read() {
        Future<Integer> first = reads.get("acme");
        for (int i = 0; i < 1000; i++) {
            assertSame(first, reads.get("acme"), "in flight");
        }
        clock.advance(Duration.ofSeconds(5));
        assertSame(first, reads.get("acme"), "still in flight, however long");
        made.get(0).complete(7);
        assertEquals(1, made.size());
        assertEquals(7, first.result());
        reads.get("acme");
        assertEquals(2, made.size(), "an answer begun more than a second ago is read again once it is in");

        made.get(1).complete(8);
        clock.advance(Duration.ofMillis(900));
        assertEquals(8, reads.get("acme").result());
        reads.get("globex");
        assertEquals(3, made.size(), "another tenant's read is its own");
    }

    @Test
    void a_failed_read_is_made_again_and_stale_keys_are_swept() {
        reads.get("acme");
        made.get(0).fail("journal down");
        reads.get("acme");
        assertEquals(2, made.size(), "failure is not kept");

        for (int i = 0; i < 300; i++) {
            reads.get("t" + i);
            made.get(made.size() - 1).complete(i);
        }
        clock.advance(Duration.ofSeconds(2));
        reads.get("late");
        assertTrue(reads.held() <= 3, "held: " + reads.held());
    }
}
