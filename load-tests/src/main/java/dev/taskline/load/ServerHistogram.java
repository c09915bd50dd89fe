package dev.taskline.load;

import java.util.Map;
import java.util.TreeMap;

/**
 * One latency histogram from the server's {@code GET /metrics}: cumulative counts by bucket upper
 * bound. Two readings give the run's own distribution as the server measured it, from a request's
 * arrival to its answer, without the generator's delays (which share the machine's cores).
 * Percentiles are bucket upper bounds, so they read "at most".
 */
final class ServerHistogram {

  private final TreeMap<Double, Double> cumulative;

  private ServerHistogram(TreeMap<Double, Double> cumulative) {
    this.cumulative = cumulative;
  }

  /** The buckets of {@code name} (e.g. taskline_accept_latency_seconds) in Prometheus text; empty if absent. */
  static ServerHistogram parse(String prometheusText, String name) {
    return parse(prometheusText, name, null);
  }

  /** As {@link #parse(String, String)}, keeping only the series with {@code label} (e.g. queue="bench"). */
  static ServerHistogram parse(String prometheusText, String name, String label) {
    TreeMap<Double, Double> buckets = new TreeMap<>();
    for (PrometheusText.Sample sample : PrometheusText.samples(prometheusText, name + "_bucket", label)) {
      String bound = sample.label("le");
      if (bound == null) {
        continue;
      }
      double upper = bound.equals("+Inf") ? Double.POSITIVE_INFINITY : Double.parseDouble(bound);
      // Several series of one name (other labels) add up, as one histogram of all of them.
      buckets.merge(upper, sample.value(), Double::sum);
    }
    return new ServerHistogram(buckets);
  }

  /**
   * What was recorded since {@code earlier} (a reading of the same histogram). Empty when the two
   * cannot be compared: the node restarted between them (counts went down), or its buckets differ.
   */
  ServerHistogram since(ServerHistogram earlier) {
    TreeMap<Double, Double> delta = new TreeMap<>();
    if (!earlier.cumulative.isEmpty() && !earlier.cumulative.keySet().equals(cumulative.keySet())) {
      return new ServerHistogram(delta);
    }
    for (Map.Entry<Double, Double> e : cumulative.entrySet()) {
      double d = e.getValue() - earlier.cumulative.getOrDefault(e.getKey(), 0.0);
      if (d < 0) {
        return new ServerHistogram(new TreeMap<>());
      }
      delta.put(e.getKey(), d);
    }
    return new ServerHistogram(delta);
  }

  long count() {
    return cumulative.isEmpty() ? 0 : Math.round(cumulative.lastEntry().getValue());
  }

  /** Upper bound in ms of the bucket that holds the p-th percentile; NaN when nothing was recorded. */
  double percentileMs(double p) {
    long n = count();
    if (n == 0) {
      return Double.NaN;
    }
    double rank = Math.ceil(n * p / 100.0);
    for (Map.Entry<Double, Double> e : cumulative.entrySet()) {
      if (e.getValue() >= rank) {
        return e.getKey() * 1000;
      }
    }
    return Double.POSITIVE_INFINITY;
  }
}
