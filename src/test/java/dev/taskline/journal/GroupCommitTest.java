package dev.taskline.journal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.taskline.model.problem.JournalBusyException;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Grouping and failure isolation, with a flush the test completes by hand. */
class GroupCommitTest {

    private final List<List<String>> flushed = new ArrayList<>();
    private final List<Promise<List<String>>> pending = new ArrayList<>();

    private final GroupCommit<String, String> commit = new GroupCommit<>(3, requests -> {
        flushed.add(List.copyOf(requests));
        Promise<List<String>> promise = Promise.promise();
        pending.add(promise);
        return promise.future();
    });

    private Future<List<String>> hold(List<String> requests) {
        flushed.add(List.copyOf(requests));
        Promise<List<String>> promise = Promise.promise();
        pending.add(promise);
        return promise.future();
    }

    private void answer(int flush) {
        List<String> requests = flushed.get(flush);
        if (requests.contains("bad")) {
            pending.get(flush).fail(new IllegalArgumentException("bad request"));
        } else {
            pending.get(flush)
                    .complete(requests.stream().map(String::toUpperCase).toList());
        }
    }

    @Test
    void requests_that_arrive_during_a_flush_share_the_next_one_up_to_the_group_limit() {
        Future<String> a = commit.submit("a");
        Future<String> b = commit.submit("b");
        Future<String> c = commit.submit("c");
        Future<String> d = commit.submit("d");
        Future<String> e = commit.submit("e");
        assertEquals(List.of(List.of("a")), flushed, "the first request flushes at once");
        answer(0);
        assertEquals(List.of("b", "c", "d"), flushed.get(1), "the next flush takes what queued, at most 3");
        answer(1);
        assertEquals(List.of("e"), flushed.get(2));
        answer(2);
        assertEquals(
                List.of("A", "B", "C", "D", "E"), List.of(a.result(), b.result(), c.result(), d.result(), e.result()));
    }

    @Test
    void beyond_the_waiting_bound_a_request_is_refused_at_once_and_never_flushed() {
        GroupCommit<String, String> bounded = new GroupCommit<>(3, 2, 1, this::hold);
        Future<String> inFlight = bounded.submit("a");
        Future<String> b = bounded.submit("b");
        Future<String> c = bounded.submit("c");
        Future<String> refused = bounded.submit("d");
        assertTrue(refused.failed());
        assertEquals(2, ((JournalBusyException) refused.cause()).waiting());
        answer(0);
        answer(1);
        assertEquals(List.of(List.of("a"), List.of("b", "c")), flushed, "'d' never reached a flush");
        assertEquals(List.of("A", "B", "C"), List.of(inFlight.result(), b.result(), c.result()));
        bounded.submit("e");
        assertEquals(List.of("e"), flushed.get(2), "room again once the waiting ones were flushed");
    }

    @Test
    void one_failing_request_does_not_fail_the_others_in_its_group() {
        Future<String> first = commit.submit("first");
        Future<String> good = commit.submit("good");
        Future<String> bad = commit.submit("bad");
        Future<String> fine = commit.submit("fine");
        answer(0);
        answer(1); // the group [good, bad, fine] fails as a whole ...
        for (int i = 2; i < flushed.size() || i < 5; i++) {
            answer(i); // ... and is retried one request at a time
        }
        assertEquals("FIRST", first.result());
        assertEquals("GOOD", good.result());
        assertEquals("FINE", fine.result());
        assertTrue(bad.failed());
        assertEquals(List.of(List.of("good"), List.of("bad"), List.of("fine")), flushed.subList(2, 5));
    }

    @Test
    void a_callback_that_throws_keeps_neither_the_rest_of_its_group_nor_the_next_flush_from_their_answers() {
        commit.submit("a");
        Future<String> b = commit.submit("b");
        Future<String> c = commit.submit("c");
        b.onSuccess(v -> {
            throw new IllegalStateException("a caller's bug");
        });
        answer(0);
        answer(1);
        assertEquals("C", c.result(), "the caller after the one that threw got its answer");
        Future<String> d = commit.submit("d");
        assertEquals(List.of("d"), flushed.get(2), "and the commit flushes on");
        answer(2);
        assertEquals("D", d.result());
    }

    @Test
    void another_statement_goes_out_beside_one_in_flight_only_once_a_group_worth_sending_waits() {
        int extra = GroupCommit.MIN_EXTRA_GROUP;
        GroupCommit<String, String> wide = new GroupCommit<>(1_000, Integer.MAX_VALUE, 3, this::hold);
        List<Future<String>> answers = new ArrayList<>();
        answers.add(wide.submit("r0"));
        assertEquals(1, flushed.size(), "the first request goes at once, alone");
        for (int i = 1; i < extra; i++) {
            answers.add(wide.submit("r" + i));
        }
        assertEquals(1, flushed.size(), "fewer than a group's worth wait for the statement out");
        assertEquals(extra - 1, wide.waiting());
        answers.add(wide.submit("r" + extra));
        assertEquals(2, flushed.size(), "a group's worth goes out beside it");
        assertEquals(extra, flushed.get(1).size());
        assertEquals(2, wide.inFlight());
        for (int i = extra + 1; i < 3 * extra; i++) {
            answers.add(wide.submit("r" + i));
        }
        assertEquals(3, flushed.size(), "a third, and no more: the bound is three");
        assertEquals(3, wide.inFlight());
        assertEquals(extra - 1, wide.waiting());
        answer(1); // the second lands before the first: statements out together commit in any order
        assertEquals(
                List.of(),
                flushed.get(1).stream()
                        .filter(r ->
                                !answers.get(Integer.parseInt(r.substring(1))).succeeded())
                        .toList(),
                "each caller of the group that landed has its answer");
        assertEquals(4, flushed.size(), "and what waited goes out in the room it left");
        assertEquals(extra - 1, flushed.get(3).size());
        answer(0);
        answer(2);
        answer(3);
        assertEquals(0, wide.inFlight());
        for (int i = 0; i < answers.size(); i++) {
            assertEquals("R" + i, answers.get(i).result());
        }
    }
}
