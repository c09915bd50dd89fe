package dev.taskline.testing;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Set;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/** The signal TestNode's waits stand on: who is woken, and that nothing said is lost or repeated. */
class TaskSignalsTest {

    private final UUID watched = UUID.randomUUID();
    private final UUID other = UUID.randomUUID();

    @Test
    void a_watch_is_woken_by_its_tasks_only() throws Exception {
        try (TaskSignals.Watch watch = TaskSignals.watch(Set.of(watched))) {
            TaskSignals.changed(List.of(other));
            assertFalse(watch.await(0), "another task's event");
            TaskSignals.changed(List.of(other, watched));
            assertTrue(watch.await(0), "a write that touched it among others");
        }
    }

    @Test
    void a_watch_of_no_task_in_particular_is_woken_by_any() throws Exception {
        try (TaskSignals.Watch watch = TaskSignals.watch(null)) {
            TaskSignals.changed(List.of(other));
            assertTrue(watch.await(0));
        }
    }

    @Test
    void signals_before_a_read_are_kept_until_cleared_and_many_wake_once() throws Exception {
        try (TaskSignals.Watch watch = TaskSignals.watch(Set.of(watched))) {
            TaskSignals.changed(List.of(watched));
            TaskSignals.changed(List.of(watched));
            assertTrue(watch.await(0), "kept for the waiter that had not yet waited");
            assertFalse(watch.await(0), "many commits, one reading again");
            TaskSignals.changed(List.of(watched));
            watch.clear();
            assertFalse(watch.await(0), "what came before the read is in what it read");
        }
    }

    @Test
    void a_closed_watch_hears_nothing() throws Exception {
        TaskSignals.Watch watch = TaskSignals.watch(Set.of(watched));
        watch.close();
        TaskSignals.changed(List.of(watched));
        assertFalse(watch.await(0));
    }
}
