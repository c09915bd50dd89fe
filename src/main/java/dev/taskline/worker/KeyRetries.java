package dev.taskline.worker;

import dev.taskline.queue.TaskQueue;
import io.vertx.core.Vertx;
import java.util.HashMap;
import java.util.Map;

/**
 * When to try again a concurrency key that the journal found full (its room taken on other nodes):
 * soon at first, then less often while it stays full, so that many full keys do not turn into a
 * stream of refused claims. A claim of the key that lands starts it over. One per verticle, used on
 * its context only.
 */
final class KeyRetries {

  static final long FIRST_MS = 25;
  static final long MOST_MS = 200;

  private final Vertx vertx;
  /** Per queue and key: the delay of the retry set, for those with one set. */
  private final Map<String, Long> waiting = new HashMap<>();
  /** Per queue and key: the delay the next retry will use. */
  private final Map<String, Long> next = new HashMap<>();

  KeyRetries(Vertx vertx) {
    this.vertx = vertx;
  }

  /** The key was full: its tasks get back in line after the next delay (one timer per key at a time). */
  void full(TaskQueue queue, String key) {
    String id = queue.name() + "/" + key;
    if (waiting.containsKey(id)) {
      return;
    }
    long delay = next.getOrDefault(id, FIRST_MS);
    next.put(id, Math.min(MOST_MS, delay * 2));
    waiting.put(id, delay);
    vertx.setTimer(delay, t -> {
      waiting.remove(id);
      queue.retryKey(key);
    });
  }

  /** A claim of the key landed: the next time it is full, retry soon again. */
  void landed(TaskQueue queue, String key) {
    next.remove(queue.name() + "/" + key);
  }
}
