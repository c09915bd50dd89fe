package dev.taskline.metrics;

import dev.taskline.queue.TaskQueue;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.time.Clock;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/** The node's meter registry and the per-queue meters, scraped at {@code GET /metrics}. */
public final class TasklineMetrics {

  private static final int RATE_WINDOW_SECONDS = 10;

  private final PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
  private final Map<String, QueueMeters> queues = new ConcurrentHashMap<>();
  private final Clock clock;

  public TasklineMetrics(Clock clock) {
    this.clock = clock;
  }

  public QueueMeters register(TaskQueue queue) {
    return queues.computeIfAbsent(queue.name(), name -> new QueueMeters(registry, name, queue::waiting,
        queue.config().slots(), queue.config().capacity(), new RateWindow(clock, RATE_WINDOW_SECONDS)));
  }

  public QueueMeters queue(String name) {
    QueueMeters meters = queues.get(name);
    if (meters == null) {
      throw new IllegalArgumentException("no meters for queue " + name);
    }
    return meters;
  }

  public String scrape() {
    return registry.scrape();
  }
}
