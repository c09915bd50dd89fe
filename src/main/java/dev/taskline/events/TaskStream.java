package dev.taskline.events;

import dev.taskline.journal.Journal;
import dev.taskline.journal.TaskState;
import io.vertx.core.Context;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Row;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
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
  private final Journal journal;
  private final Set<UUID> tasks;
  private final StreamSink sink;
  private final Runnable onClose;
  private final Map<UUID, Long> finishedAt = new HashMap<>();
  private final Map<UUID, JsonObject> pendingProgress = new LinkedHashMap<>();
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

  TaskStream(Vertx vertx, Context context, Journal journal, Set<UUID> tasks, long afterEventId, StreamSink sink,
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
      JsonArray states = new JsonArray();
      for (Row row : done.result()) {
        UUID id = row.getUUID("id");
        TaskState state = TaskState.parse(row.getString("state"));
        Long last = row.getLong("last_event_id");
        if (state != null && state.terminal() && last != null) {
          finishedAt.put(id, last);
        }
        if (state != null && (last == null || last <= cursor)) {
          shown.put(id, state); // nothing to replay for this task: the subscriber is up to date
        }
        states.add(new JsonObject()
            .put("id", id.toString())
            .put("state", state == null ? null : state.sql())
            .put("attempt", row.getInteger("attempt"))
            .put("progress", new JsonObject()
                .put("percent", row.getValue("progress_percent") == null ? 0 : row.getInteger("progress_percent"))
                .put("message", row.getString("progress_message")))
            .put("result", row.getValue("result"))
            .put("error", row.getValue("error"))
            // The page can tell a replayed transition it already reflects from a new one.
            .put("lastEventId", last));
      }
      if (!closed) {
        sink.send("snapshot", -1, new JsonObject().put("tasks", states));
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
      JsonObject data = new JsonObject().put("taskId", task.toString()).put("percent", percent).put("message", message);
      if (shown.get(task) != TaskState.RUNNING) {
        pendingProgress.put(task, data); // shown once its "running" event is out
      } else if (sink.full()) {
        pendingProgress.put(task, data); // only the latest per task matters
        waitForDrain();
      } else {
        sink.send("progress", -1, data);
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

  private void deliver(Journal.EventPage page) {
    // Events up to what the previous read saw are final once every transaction it saw in
    // progress has ended.
    long safe = cursor;
    if (heldUpTo > cursor && java.util.Collections.disjoint(heldBehind, page.inProgress())) {
      safe = heldUpTo;
    }
    long newest = cursor;
    for (Object item : page.events()) {
      JsonObject event = (JsonObject) item;
      long id = event.getLong("eventId");
      newest = Math.max(newest, id);
      if (id <= safe) {
        emit(event);
      }
    }
    cursor = safe;
    if (newest > cursor) {
      heldUpTo = newest;
      heldBehind = new HashSet<>(page.inProgress());
    } else {
      heldUpTo = -1;
      heldBehind = Set.of();
    }
    if (heldUpTo <= cursor && allFinished()) {
      sink.send("end", -1, new JsonObject());
      close();
    }
  }

  private void emit(JsonObject event) {
    long id = event.getLong("eventId");
    UUID task = UUID.fromString(event.getString("taskId"));
    JsonObject state = new JsonObject()
        .put("taskId", task.toString())
        .put("from", event.getString("from"))
        .put("to", event.getString("to"))
        .put("reason", event.getString("reason"))
        .put("attempt", event.getInteger("attempt"))
        .put("leaseVersion", event.getLong("leaseVersion"))
        .put("at", event.getString("at"));
    JsonObject detail = event.getJsonObject("detail");
    if (detail != null) {
      state.put("detail", detail);
    }
    TaskState to = TaskState.parse(event.getString("to"));
    if (to != null && to.terminal()) {
      // The outcome rides on the terminal transition itself: the "result" event after it shares its
      // id, so a client that drops between the two and resumes after that id still has it.
      if (to == TaskState.SUCCEEDED) {
        state.put("result", event.getValue("result"));
      } else if (detail != null) {
        state.put("error", detail);
      }
    }
    sink.send("state", id, state);
    shown.put(task, to);
    JsonObject progress = pendingProgress.remove(task);
    if (progress != null && to == TaskState.RUNNING) {
      sink.send("progress", -1, progress);
    }
    if (to != null && to.terminal()) {
      JsonObject result = new JsonObject().put("taskId", task.toString()).put("state", to.sql());
      if (to == TaskState.SUCCEEDED) {
        result.put("result", event.getValue("result"));
      } else if (detail != null) {
        result.put("error", detail);
      }
      sink.send("result", id, result);
      finishedAt.put(task, id);
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
      for (JsonObject data : List.copyOf(pendingProgress.values())) {
        UUID task = UUID.fromString(data.getString("taskId"));
        if (shown.get(task) == TaskState.RUNNING) {
          pendingProgress.remove(task);
          sink.send("progress", -1, data);
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
