package dev.taskline.load;

import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * Follows every accepted task to its end, by polling.
 *
 * <p>Single tasks: their ids are UUIDv7 and sort by age, and {@code GET /api/tasks?state=S&queue=Q}
 * pages newest first, so one sweep per terminal state reads pages until it passes the oldest id
 * still open. When few remain, each is read with {@code GET /api/tasks/{id}}. Batches: {@code GET
 * /api/batches/{id}} until {@code succeeded + failed + cancelled == size}.
 *
 * <p>Used from the event-loop thread only.
 */
final class Follower {

  private static final String[] TERMINAL = {"succeeded", "failed", "cancelled"};
  private static final int PAGE = 1_000;
  private static final int FEW = 300;

  private final Vertx vertx;
  private final Api api;
  private final String queue;

  /** Open single tasks (ids sort by age). */
  private final TreeSet<String> openTasks = new TreeSet<>();
  /** Open batches in the order they were accepted: id to size. */
  private final LinkedHashMap<String, Integer> openBatches = new LinkedHashMap<>();
  private final Map<String, Long> batchAcceptedAt = new LinkedHashMap<>();

  long acceptedTasks;
  long terminalTasks;
  final Map<String, Long> terminalByState = new TreeMap<>();
  long pollRequests;
  long pollErrors;
  String lastPollError;
  /** Open tasks at the end, by what the server last said about them. */
  final Map<String, Long> lostByState = new TreeMap<>();
  final List<String> lostExamples = new ArrayList<>();
  private final Map<String, String> lastSeenState = new LinkedHashMap<>();
  private final Map<String, JsonObject> lastCounts = new LinkedHashMap<>();

  private long timer = -1;
  private boolean busy;

  Follower(Vertx vertx, Api api, String queue) {
    this.vertx = vertx;
    this.api = api;
    this.queue = queue;
    for (String s : TERMINAL) {
      terminalByState.put(s, 0L);
    }
  }

  /** Accepted work handed over from the load event loop; taken in on the follower's own loop. */
  private final ConcurrentLinkedQueue<Object[]> inbox = new ConcurrentLinkedQueue<>();

  /** May be called from any thread. */
  void acceptedTask(String id) {
    inbox.add(new Object[] {id});
  }

  /** May be called from any thread. */
  void acceptedBatch(String batchId, int size) {
    inbox.add(new Object[] {batchId, size, System.nanoTime()});
  }

  private void absorb() {
    Object[] item;
    while ((item = inbox.poll()) != null) {
      if (item.length == 1) {
        acceptedTasks++;
        openTasks.add((String) item[0]);
      } else {
        int size = (Integer) item[1];
        acceptedTasks += size;
        openBatches.put((String) item[0], size);
        batchAcceptedAt.put((String) item[0], (Long) item[2]);
      }
    }
  }

  /** The caller read the task itself and saw it ended. */
  void observedTerminal(String id, String state) {
    absorb();
    if (openTasks.remove(id)) {
      ended(state, 1);
    }
  }

  long open() {
    absorb();
    long n = openTasks.size();
    for (int size : openBatches.values()) {
      n += size;
    }
    return n;
  }

  /** Polls lightly while the load runs: one round per second, never two at once. */
  void startBackground() {
    timer = vertx.setPeriodic(1_000, id -> {
      if (busy) {
        return;
      }
      busy = true;
      round(false).onComplete(ar -> busy = false);
    });
  }

  void stopBackground() {
    if (timer >= 0) {
      vertx.cancelTimer(timer);
      timer = -1;
    }
  }

  /**
   * After the load: rounds until every task ended or the deadline passed. {@code backlog} tells
   * whether the server still has work of the queue, in which case a round stays small.
   */
  Future<Void> drain(long deadlineNanos, java.util.function.Supplier<Long> backlog) {
    Promise<Void> done = Promise.promise();
    drainStep(deadlineNanos, backlog, done);
    return done.future();
  }

  private void drainStep(long deadlineNanos, java.util.function.Supplier<Long> backlog, Promise<Void> done) {
    if (open() == 0) {
      done.complete();
      return;
    }
    if (System.nanoTime() >= deadlineNanos) {
      finalCensus().onComplete(ar -> done.complete());
      return;
    }
    Long b = backlog.get();
    boolean idle = b != null && b == 0;
    round(idle).onComplete(ar -> {
      if (open() == 0) {
        done.complete();
      } else {
        vertx.setTimer(idle ? 500 : 1_000, id -> drainStep(deadlineNanos, backlog, done));
      }
    });
  }

  private Future<Void> round(boolean full) {
    absorb();
    Future<Void> tasks = openTasks.isEmpty() ? Future.succeededFuture()
        : openTasks.size() <= FEW && full ? atMost(8, new ArrayList<>(openTasks), this::readTask) : sweep();
    return tasks.compose(v -> batches(full));
  }

  // ---- single tasks -------------------------------------------------------------------------

  private Future<Void> sweep() {
    Future<Void> f = Future.succeededFuture();
    for (String state : TERMINAL) {
      f = f.compose(v -> sweepState(state, null));
    }
    return f;
  }

  private Future<Void> sweepState(String state, String after) {
    if (openTasks.isEmpty()) {
      return Future.succeededFuture();
    }
    String oldest = openTasks.first();
    String path = "/api/tasks?state=" + state + "&queue=" + URLEncoder.encode(queue, StandardCharsets.UTF_8)
        + "&limit=" + PAGE
        + (after == null ? "" : "&after=" + after);
    pollRequests++;
    return api.get(path).compose(reply -> {
      if (reply.status() != 200 || reply.json() == null) {
        pollError("GET " + path + " answered " + reply.status() + " " + abbreviate(reply.text()));
        return Future.succeededFuture();
      }
      JsonArray tasks = reply.json().getJsonArray("tasks", new JsonArray());
      String lastId = null;
      for (int i = 0; i < tasks.size(); i++) {
        JsonObject task = tasks.getJsonObject(i);
        String id = task.getString("id");
        lastId = id;
        if (id != null && openTasks.remove(id)) {
          ended(task.getString("state", state), 1);
        }
      }
      String next = reply.json().getString("next");
      if (next == null || lastId == null || lastId.compareTo(oldest) < 0 || openTasks.isEmpty()) {
        return Future.succeededFuture();
      }
      return sweepState(state, next);
    }, e -> {
      pollError(e.toString());
      return Future.succeededFuture();
    });
  }

  /** One GET /api/tasks/{id}; never fails. */
  private Future<Void> readTask(String id) {
    return poll("/api/tasks/" + id, id, "missing (404)", task -> {
      String state = task.getString("state");
      lastSeenState.put(id, state);
      if (isTerminal(state) && openTasks.remove(id)) {
        ended(state, 1);
      }
    });
  }

  /**
   * One GET of {@code path}: its JSON goes to {@code found}; a 404 is noted as {@code missing} for
   * {@code id}; anything else counts as a poll error. Never fails.
   */
  private Future<Void> poll(String path, String id, String missing, Consumer<JsonObject> found) {
    pollRequests++;
    return api.get(path).transform(ar -> {
      if (ar.succeeded() && ar.result().status() == 200 && ar.result().json() != null) {
        found.accept(ar.result().json());
      } else if (ar.succeeded() && ar.result().status() == 404) {
        lastSeenState.put(id, missing);
      } else {
        pollError(ar.succeeded() ? "GET " + path + " answered " + ar.result().status() : ar.cause().toString());
      }
      return Future.<Void>succeededFuture();
    });
  }

  /** Runs {@code read} on every id, {@code parallel} at a time; done when all are. */
  private Future<Void> atMost(int parallel, List<String> ids, Function<String, Future<Void>> read) {
    Promise<Void> done = Promise.promise();
    Iterator<String> it = ids.iterator();
    int[] running = {0};
    Runnable[] pump = new Runnable[1];
    pump[0] = () -> {
      while (running[0] < parallel && it.hasNext()) {
        running[0]++;
        read.apply(it.next()).onComplete(ar -> {
          running[0]--;
          pump[0].run();
        });
      }
      if (running[0] == 0 && !it.hasNext()) {
        done.tryComplete();
      }
    };
    pump[0].run();
    return done.future();
  }

  // ---- batches ------------------------------------------------------------------------------

  /**
   * Reads open batches: all of them when the server is idle; else, while the queue still has work,
   * the oldest ones one by one, stopping at the first that has not ended (work is taken in order, so
   * the younger ones have not ended either) and after 20.
   */
  private Future<Void> batches(boolean full) {
    if (openBatches.isEmpty()) {
      return Future.succeededFuture();
    }
    if (!full) {
      return oldestBatches(new ArrayList<>(openBatches.keySet()).iterator(), 20);
    }
    return atMost(8, new ArrayList<>(openBatches.keySet()), this::readBatch);
  }

  private Future<Void> oldestBatches(Iterator<String> it, int left) {
    if (left == 0 || !it.hasNext()) {
      return Future.succeededFuture();
    }
    String id = it.next();
    Long acceptedAt = batchAcceptedAt.get(id);
    if (acceptedAt == null || System.nanoTime() - acceptedAt < 1_000_000_000L) {
      return Future.succeededFuture();
    }
    return readBatch(id).compose(v -> openBatches.containsKey(id) ? Future.succeededFuture()
        : oldestBatches(it, left - 1));
  }

  /** One GET /api/batches/{id}; never fails. */
  private Future<Void> readBatch(String id) {
    return poll("/api/batches/" + id, id, "batch missing (404)", batch -> batchRead(id, batch));
  }

  private void batchRead(String id, JsonObject batch) {
    Integer size = openBatches.get(id);
    if (size == null) {
      return;
    }
    JsonObject counts = batch.getJsonObject("counts", new JsonObject());
    long terminal = 0;
    for (String s : TERMINAL) {
      terminal += counts.getLong(s, 0L);
    }
    int reportedSize = batch.getInteger("size", size);
    if (reportedSize != size) {
      lastSeenState.put(id, "batch size " + reportedSize + " but " + size + " accepted");
    }
    if (terminal >= size) {
      openBatches.remove(id);
      batchAcceptedAt.remove(id);
      for (String s : TERMINAL) {
        ended(s, counts.getLong(s, 0L));
      }
    } else {
      lastCounts.put(id, counts);
      StringBuilder text = new StringBuilder("batch open:");
      counts.forEach(e -> text.append(' ').append(e.getKey()).append('=').append(e.getValue()));
      lastSeenState.put(id, text.toString());
    }
  }

  // ---- the end ------------------------------------------------------------------------------

  /** At the deadline: reads what is still open once more and records it as lost. */
  private Future<Void> finalCensus() {
    List<String> few = new ArrayList<>();
    for (String id : openTasks) {
      if (few.size() >= FEW) {
        break;
      }
      few.add(id);
    }
    return atMost(8, few, this::readTask).compose(v -> batches(true)).onComplete(ar -> {
      for (String id : openTasks) {
        String state = lastSeenState.getOrDefault(id, "not read");
        lostByState.merge(state, 1L, Long::sum);
        if (lostExamples.size() < 10) {
          lostExamples.add("task " + id + ": " + state);
        }
      }
      for (Map.Entry<String, Integer> e : openBatches.entrySet()) {
        String state = lastSeenState.getOrDefault(e.getKey(), "not read");
        JsonObject counts = lastCounts.get(e.getKey());
        if (counts != null && state.startsWith("batch open")) {
          // The tasks of the batch that did end count as ended; the rest are lost, by state.
          for (String s : TERMINAL) {
            ended(s, counts.getLong(s, 0L));
          }
          counts.forEach(c -> {
            if (!isTerminal(c.getKey()) && c.getValue() instanceof Number n && n.longValue() > 0) {
              lostByState.merge(c.getKey() + " (in batches)", n.longValue(), Long::sum);
            }
          });
        } else {
          lostByState.merge(state, (long) e.getValue(), Long::sum);
        }
        if (lostExamples.size() < 10) {
          lostExamples.add("batch " + e.getKey() + " (" + e.getValue() + " tasks): " + state);
        }
      }
    }).mapEmpty();
  }

  private void ended(String state, long n) {
    if (n <= 0) {
      return;
    }
    terminalTasks += n;
    terminalByState.merge(state, n, Long::sum);
  }

  private void pollError(String text) {
    pollErrors++;
    lastPollError = text;
  }

  private static boolean isTerminal(String state) {
    for (String s : TERMINAL) {
      if (s.equals(state)) {
        return true;
      }
    }
    return false;
  }

  private static String abbreviate(String text) {
    return text == null ? "" : text.length() > 200 ? text.substring(0, 200) + "..." : text;
  }
}
