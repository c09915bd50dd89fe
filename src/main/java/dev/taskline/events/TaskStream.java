package dev.taskline.events;

import dev.taskline.journal.JournalReads;
import dev.taskline.model.Event;
import dev.taskline.model.EventPage;
import dev.taskline.model.Progress;
import dev.taskline.model.TaskSnapshot;
import dev.taskline.model.TaskState;
import io.vertx.core.Context;
import io.vertx.core.Vertx;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * One subscriber following a set of tasks: first their current state, then every journaled
 * transition once, in journal order, with no gap, then the end when all have finished. Transitions
 * are read from the journal, never from memory, so a resumed stream ({@code Last-Event-ID}) and a
 * live one see the same sequence. Progress is live only: coalesced to the latest per task while
 * the subscriber is slow, never journaled.
 *
 * <p>Why events are held back: ids come from a sequence, and a transaction may take id 104, then
 * commit after another one made 105 visible. A reader that moved its cursor past 105 would never
 * see 104. So an event read at snapshot S is delivered only once every transaction in progress at
 * S has ended; after that no id at or below S's newest can appear any more, because any later
 * transaction draws larger ids. That costs one extra read, milliseconds later.
 *
 * <p>All state lives on the subscriber's event loop; {@link #poke} and {@link #progress} may be
 * called from any thread.
 */
public final class TaskStream {

    private static final Logger LOG = Logger.getLogger(TaskStream.class.getName());
    private static final int PAGE = 1_000;
    /** How soon to read again while events are held back: in-flight statements take milliseconds. */
    private static final long SETTLE_MS = 5;
    /** A subscriber whose buffer stays full this long is closed; it resumes from the journal. */
    private static final long STALLED_MS = 30_000;

    private final Vertx vertx;
    private final Context context;
    private final JournalReads journal;
    private final Set<UUID> tasks;
    private final StreamSink sink;
    private final Runnable onClose;
    private final Map<UUID, Long> finishedAt = new HashMap<>();
    private final Map<UUID, Progress> pendingProgress = new LinkedHashMap<>();
    // The state each task has as far as this subscriber knows; progress is shown only for a task it
    // knows to be running, so that it never sees progress before the "running" event.
    private final Map<UUID, TaskState> shown = new HashMap<>();
    private final Map<UUID, String> lastProgress = new HashMap<>();
    private long cursor;
    private long heldUpTo = -1;
    private Set<String> heldBehind = Set.of();
    private boolean reading;
    private boolean again;
    private boolean closed;
    private boolean started;
    private long stalledTimer = -1;

    TaskStream(
            Vertx vertx,
            Context context,
            JournalReads journal,
            Set<UUID> tasks,
            long afterEventId,
            StreamSink sink,
            Runnable onClose) {
        this.vertx = vertx;
        this.context = context;
        this.journal = journal;
        this.tasks = Set.copyOf(tasks);
        this.cursor = afterEventId;
        this.sink = sink;
        this.onClose = onClose;
    }

    Set<UUID> tasks() {
        return tasks;
    }

    long cursor() {
        return cursor;
    }

    /** Sends the snapshot, then replays and follows. */
    void start() {
        journal.streamSnapshot(tasks).onComplete(done -> {
            if (done.failed()) {
                fail(done.cause());
                return;
            }
            for (TaskSnapshot task : done.result()) {
                Long last = task.lastEventId();
                if (task.state() != null && task.state().terminal() && last != null) {
                    finishedAt.put(task.id(), last);
                }
                if (task.state() != null && (last == null || last <= cursor)) {
                    shown.put(task.id(), task.state()); // nothing to replay for this task: the subscriber is up to date
                }
            }
            if (!closed) {
                sink.snapshot(done.result());
                started = true;
                read();
            }
        });
    }

    /** Something happened to one of our tasks: read the journal (soon, once). */
    public void poke() {
        onContext(this::read);
    }

    public void progress(UUID task, int percent, String message) {
        onContext(() -> {
            if (closed || !started) {
                return;
            }
            String key = percent + "|" + message;
            if (key.equals(lastProgress.put(task, key))) {
                return; // already shown (the catch-up re-reads what the worker reported here)
            }
            Progress data = new Progress(task, percent, message);
            if (shown.get(task) != TaskState.RUNNING) {
                pendingProgress.put(task, data); // shown once its "running" event is out
            } else if (sink.full()) {
                pendingProgress.put(task, data); // only the latest per task matters
                waitForDrain();
            } else {
                sink.progress(task, percent, message);
            }
        });
    }

    public void close() {
        onContext(() -> {
            if (!closed) {
                closed = true;
                if (stalledTimer != -1) {
                    vertx.cancelTimer(stalledTimer);
                }
                sink.close();
                onClose.run();
            }
        });
    }

    private void read() {
        if (closed || !started) {
            return;
        }
        if (reading) {
            again = true;
            return;
        }
        if (sink.full()) {
            waitForDrain();
            return;
        }
        reading = true;
        again = false;
        journal.streamEvents(tasks, cursor, PAGE).onComplete(done -> {
            reading = false;
            if (done.failed()) {
                fail(done.cause());
                return;
            }
            deliver(done.result());
            if (closed) {
                return;
            }
            if (again || done.result().events().size() >= PAGE) {
                read();
            } else if (heldUpTo > cursor) {
                vertx.setTimer(SETTLE_MS, id -> read());
            }
        });
    }

    private void deliver(EventPage page) {
        // Events up to what the previous read saw are final once every transaction it saw in
        // progress has ended.
        long safe = cursor;
        if (heldUpTo > cursor && java.util.Collections.disjoint(heldBehind, page.inProgress())) {
            safe = heldUpTo;
        }
        long newest = cursor;
        long emitted = cursor;
        boolean stopped = false;
        for (Event event : page.events()) {
            long id = event.eventId();
            newest = Math.max(newest, id);
            if (id <= safe && !stopped) {
                if (sink.full()) {
                    // A slow subscriber: the rest stays in the journal, read again once the buffer drains.
                    stopped = true;
                    continue;
                }
                emit(event);
                emitted = id;
            }
        }
        // Stopped early, the cursor is the last event out; what lay past it is held back as unread,
        // until the transactions this read saw in progress have ended (never less safe than before).
        cursor = stopped ? emitted : safe;
        if (stopped) {
            heldUpTo = newest;
            heldBehind = new HashSet<>(page.inProgress());
            waitForDrain();
            return;
        }
        if (newest > cursor) {
            heldUpTo = newest;
            heldBehind = new HashSet<>(page.inProgress());
        } else {
            heldUpTo = -1;
            heldBehind = Set.of();
        }
        if (heldUpTo <= cursor && allFinished()) {
            sink.end();
            close();
        }
    }

    private void emit(Event event) {
        UUID task = event.taskId();
        TaskState to = event.to();
        boolean terminal = to != null && to.terminal();
        // The outcome rides on the terminal transition itself, so a client that resumes after its id
        // has it; the "result" event after it repeats it without an id of its own, as every id on a
        // stream must be unique for a client that drops repeats.
        Object result = terminal && to == TaskState.SUCCEEDED ? event.result() : null;
        Object error = terminal && to != TaskState.SUCCEEDED ? event.detail() : null;
        sink.state(event, result, error);
        shown.put(task, to);
        Progress progress = pendingProgress.remove(task);
        if (progress != null && to == TaskState.RUNNING) {
            sink.progress(task, progress.percent(), progress.message());
        }
        if (terminal) {
            sink.result(task, to, result, error);
            finishedAt.put(task, event.eventId());
        } else {
            finishedAt.remove(task); // a retried task runs again
        }
    }

    private boolean allFinished() {
        if (finishedAt.size() < tasks.size()) {
            return false;
        }
        for (long last : finishedAt.values()) {
            if (last > cursor) {
                return false;
            }
        }
        return true;
    }

    private void waitForDrain() {
        if (stalledTimer != -1 || closed) {
            return;
        }
        stalledTimer = vertx.setTimer(STALLED_MS, id -> close());
        sink.onDrain(v -> onContext(() -> {
            vertx.cancelTimer(stalledTimer);
            stalledTimer = -1;
            for (Progress data : java.util.List.copyOf(pendingProgress.values())) {
                if (shown.get(data.taskId()) == TaskState.RUNNING) {
                    pendingProgress.remove(data.taskId());
                    sink.progress(data.taskId(), data.percent(), data.message());
                }
            }
            read();
        }));
    }

    private void fail(Throwable cause) {
        LOG.log(Level.FINE, "stream read failed; closing it, the client resumes from the journal", cause);
        close();
    }

    private void onContext(Runnable action) {
        if (Vertx.currentContext() == context) {
            action.run();
        } else {
            context.runOnContext(v -> action.run());
        }
    }
}
