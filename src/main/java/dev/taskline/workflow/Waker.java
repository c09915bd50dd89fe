package dev.taskline.workflow;

import dev.taskline.journal.JournalSteps;
import dev.taskline.metrics.StepMeters;
import dev.taskline.model.Task;
import dev.taskline.model.Waking;
import dev.taskline.queue.NodeQueues;
import dev.taskline.queue.QueueCustody;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.VerticleBase;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * Wakes suspended tasks when their time comes (a sleep's end, a wait's timeout) and hands them to
 * their queues here. Sleepers stay in the journal alone, however many and however long: the node
 * keeps only the earliest wake time, with a timer set for it. Suspends on this node move the timer
 * at once; other nodes' are seen by a slow poll of the earliest wake time (one index entry read).
 * {@link #runOnce} is the whole pass, which tests call after moving their clock.
 */
public final class Waker extends VerticleBase implements Waking {

    private static final Logger LOG = Logger.getLogger(Waker.class.getName());
    private static final long POLL_MS = 1_000;

    private final JournalSteps steps;
    private final NodeQueues<? extends QueueCustody> queues;
    private final Clock clock;
    private final int batch;
    private final StepMeters meters;
    private long poll = -1;
    private long timer = -1;
    private long armedFor = Long.MAX_VALUE;
    private boolean passing;
    private boolean passAgain;
    private volatile Context loop;

    public Waker(
            JournalSteps steps, NodeQueues<? extends QueueCustody> queues, Clock clock, int batch, StepMeters meters) {
        this.meters = meters;
        this.steps = steps;
        this.queues = queues;
        this.clock = clock;
        this.batch = batch;
    }

    @Override
    public Future<?> start() {
        loop = context;
        poll = vertx.setPeriodic(POLL_MS, id -> pass());
        pass();
        return Future.succeededFuture();
    }

    @Override
    public Future<?> stop() {
        vertx.cancelTimer(poll);
        vertx.cancelTimer(timer);
        return Future.succeededFuture();
    }

    /** A task suspended here until {@code at}: the timer moves earlier if it must. From any thread. */
    @Override
    public void wakeAt(Instant at) {
        Context on = loop;
        if (on != null) {
            on.runOnContext(v -> arm(at.toEpochMilli()));
        }
    }

    @Override
    public void hold(List<Task> tasks) {
        Map<String, List<Task>> byQueue = new LinkedHashMap<>();
        for (Task task : tasks) {
            byQueue.computeIfAbsent(task.queue(), q -> new ArrayList<>()).add(task);
        }
        byQueue.forEach((name, woken) -> {
            QueueCustody queue = queues.get(name);
            // A queue with no room leaves them in the journal, due: page-in takes them when it has.
            if (queue != null) {
                queue.offerOrLeave(woken, woken.size());
            }
        });
    }

    /** Wakes every suspended task whose time came; the future holds how many. */
    public Future<Integer> runOnce() {
        Promise<Integer> woken = Promise.promise();
        loop.runOnContext(v -> wakeDue(0).compose(n -> rearm().map(n)).onComplete(woken));
        return woken.future();
    }

    private void pass() {
        if (passing) {
            passAgain = true;
            return;
        }
        passing = true;
        wakeDue(0)
                .compose(n -> rearm())
                .onFailure(e -> LOG.log(Level.FINE, "waking suspended tasks failed; the next pass tries again", e))
                .onComplete(done -> {
                    passing = false;
                    if (passAgain) {
                        passAgain = false;
                        pass();
                    }
                });
    }

    private Future<Integer> wakeDue(int sofar) {
        return steps.wakeDue(batch).compose(tasks -> {
            long now = clock.millis();
            for (Task task : tasks) {
                meters.woke(now - task.dueAtMillis());
            }
            hold(tasks);
            return tasks.size() < batch ? Future.succeededFuture(sofar + tasks.size()) : wakeDue(sofar + tasks.size());
        });
    }

    private Future<Void> rearm() {
        return steps.nextWake().map(next -> {
            armedFor = Long.MAX_VALUE;
            if (timer != -1) {
                vertx.cancelTimer(timer);
                timer = -1;
            }
            if (next != null) {
                arm(next.toEpochMilli());
            }
            return null;
        });
    }

    private void arm(long atMillis) {
        if (atMillis >= armedFor) {
            return;
        }
        if (timer != -1) {
            vertx.cancelTimer(timer);
        }
        armedFor = atMillis;
        // Far wake-ups are left to the poll, which sees them again long before they come.
        long delay = Math.max(1, Math.min(atMillis - clock.millis(), POLL_MS * 60));
        timer = vertx.setTimer(delay, id -> {
            timer = -1;
            armedFor = Long.MAX_VALUE;
            pass();
        });
    }
}
