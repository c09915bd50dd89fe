package dev.taskline.load;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.HdrHistogram.Histogram;

/**
 * Counts and latencies of the load requests, in total and per second of the run. Used from the one
 * event-loop thread only; read by the main thread after the run has stopped.
 */
final class Recorder {

  /** Highest latency the histograms hold, in microseconds (10 minutes). */
  static final long MAX_MICROS = 600_000_000L;

  /** What happened in one second of the run. */
  static final class Second {
    long offeredRequests;
    long offeredTasks;
    long sentRequests;
    long droppedRequests;
    long accepted202;
    long acceptedTasks;
    long rejected429;
    long rejectedTasks;
    long status5xx;
    long statusOther;
    long errors;
    long maxSendLagNanos;
    final Histogram acceptLatency = new Histogram(MAX_MICROS, 2);
    final Histogram rejectLatency = new Histogram(MAX_MICROS, 2);
    final Histogram startLatency = new Histogram(MAX_MICROS, 2);
  }

  final int batch;
  final List<Second> seconds = new ArrayList<>();

  long offeredRequests;
  long offeredTasks;
  long sentRequests;
  long droppedRequests;
  long accepted202;
  long acceptedTasks;
  long rejected429;
  long rejectedTasks;
  long status5xx;
  long status4xxOther;
  long statusOther;
  long connectionErrors;
  long timeouts;
  long maxSendLagNanos;
  long sendLagOver10ms;
  int peakInFlight;
  final Map<Integer, Long> statuses = new TreeMap<>();
  final Map<String, Long> errorKinds = new TreeMap<>();
  final List<String> firstProblems = new ArrayList<>();
  final Histogram acceptLatency = new Histogram(MAX_MICROS, 3);
  final Histogram rejectLatency = new Histogram(MAX_MICROS, 3);
  /** The same two from the actual send (the generator's own delays left out), for comparison. */
  final Histogram acceptService = new Histogram(MAX_MICROS, 3);
  final Histogram rejectService = new Histogram(MAX_MICROS, 3);
  /** idle-latency only: startedAt - createdAt, and createdAt to finishedAt. */
  final Histogram startLatency = new Histogram(MAX_MICROS, 3);
  final Histogram endToEndLatency = new Histogram(MAX_MICROS, 3);

  Recorder(int batch) {
    this.batch = batch;
  }

  Second second(double secondsFromStart) {
    int index = Math.max(0, (int) Math.floor(secondsFromStart));
    while (seconds.size() <= index) {
      seconds.add(new Second());
    }
    return seconds.get(index);
  }

  void offered(double plannedSeconds) {
    offeredRequests++;
    offeredTasks += batch;
    Second s = second(plannedSeconds);
    s.offeredRequests++;
    s.offeredTasks += batch;
  }

  void dropped(double plannedSeconds) {
    droppedRequests++;
    second(plannedSeconds).droppedRequests++;
  }

  void sent(double plannedSeconds, long lagNanos, int inFlight) {
    sentRequests++;
    Second s = second(plannedSeconds);
    s.sentRequests++;
    s.maxSendLagNanos = Math.max(s.maxSendLagNanos, lagNanos);
    if (lagNanos > maxSendLagNanos) {
      maxSendLagNanos = lagNanos;
    }
    if (lagNanos > 10_000_000L) {
      sendLagOver10ms++;
    }
    if (inFlight > peakInFlight) {
      peakInFlight = inFlight;
    }
  }

  /** An answer arrived at {@code atSeconds}, {@code latencyMicros} after the planned send time. */
  void answered(double atSeconds, int status, long latencyMicros, long serviceMicros, int tasks) {
    statuses.merge(status, 1L, Long::sum);
    Second s = second(atSeconds);
    long micros = Math.min(Math.max(latencyMicros, 0), MAX_MICROS);
    if (status == 202) {
      accepted202++;
      acceptedTasks += tasks;
      s.accepted202++;
      s.acceptedTasks += tasks;
      acceptLatency.recordValue(micros);
      s.acceptLatency.recordValue(micros);
      acceptService.recordValue(Math.min(Math.max(serviceMicros, 0), MAX_MICROS));
    } else if (status == 429) {
      rejected429++;
      rejectedTasks += tasks;
      s.rejected429++;
      s.rejectedTasks += tasks;
      rejectLatency.recordValue(micros);
      s.rejectLatency.recordValue(micros);
      rejectService.recordValue(Math.min(Math.max(serviceMicros, 0), MAX_MICROS));
    } else if (status >= 500) {
      status5xx++;
      s.status5xx++;
    } else {
      if (status >= 400) {
        status4xxOther++;
      }
      statusOther++;
      s.statusOther++;
    }
  }

  /** No answer: the connection failed or the request timed out. */
  void failed(double atSeconds, Throwable cause) {
    String kind = cause.getClass().getSimpleName();
    String message = String.valueOf(cause.getMessage());
    boolean timeout = kind.contains("Timeout") || message.toLowerCase().contains("timeout")
        || message.toLowerCase().contains("timed out");
    if (timeout) {
      timeouts++;
    } else {
      connectionErrors++;
    }
    second(atSeconds).errors++;
    errorKinds.merge(kind + ": " + message, 1L, Long::sum);
  }

  void problem(String text) {
    if (firstProblems.size() < 10) {
      firstProblems.add(text);
    }
  }

  void startLatency(double atSeconds, long micros) {
    long v = Math.min(Math.max(micros, 0), MAX_MICROS);
    startLatency.recordValue(v);
    second(atSeconds).startLatency.recordValue(v);
  }

  /** Latency in milliseconds at a percentile, or NaN with no values. */
  static double ms(Histogram h, double percentile) {
    if (h.getTotalCount() == 0) {
      return Double.NaN;
    }
    return h.getValueAtPercentile(percentile) / 1000.0;
  }

  static double maxMs(Histogram h) {
    return h.getTotalCount() == 0 ? Double.NaN : h.getMaxValue() / 1000.0;
  }
}
