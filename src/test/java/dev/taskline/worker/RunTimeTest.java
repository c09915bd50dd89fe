package dev.taskline.worker;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

/** How many tasks a worker claims ahead, from its handlers' recent run time. */
class RunTimeTest {

    @Test
    void nothing_is_claimed_ahead_before_a_handler_has_returned() {
        assertEquals(0, new WorkerVerticle.RunTime().ahead(10, 100));
    }

    @Test
    void short_handlers_get_the_most_allowed_and_slow_ones_none() {
        WorkerVerticle.RunTime fast = new WorkerVerticle.RunTime();
        fast.add(20_000); // 20 µs
        assertEquals(100, fast.ahead(10, 100), "10 slots would start 25,000 in 50 ms: capped");

        WorkerVerticle.RunTime medium = new WorkerVerticle.RunTime();
        medium.add(20_000_000); // 20 ms
        assertEquals(25, medium.ahead(10, 100), "10 slots start 25 tasks in 50 ms");

        WorkerVerticle.RunTime slow = new WorkerVerticle.RunTime();
        slow.add(1_000_000_000); // 1 s
        assertEquals(0, slow.ahead(2, 100), "two slots of 1 s tasks start none within 50 ms");
    }

    @Test
    void the_mean_follows_a_change_of_pace_within_a_few_dozen_tasks() {
        WorkerVerticle.RunTime time = new WorkerVerticle.RunTime();
        time.add(20_000);
        for (int i = 0; i < 64; i++) {
            time.add(1_000_000_000);
        }
        assertEquals(0, time.ahead(2, 100), "handlers became slow: claims ahead stop");
    }
}
