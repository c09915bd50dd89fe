package dev.taskline.load;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/** Everything one run found out, for the summary and the report. */
final class Run {

  final Options options;
  final Instant startedAt = Instant.now();
  final List<String> plan = new ArrayList<>();
  final List<String> notes = new ArrayList<>();
  Schedule schedule;
  Recorder recorder;
  Follower follower;
  Sampler sampler;

  /** Seconds from t0 that the load lasted (the schedule, or the closed loop). */
  double loadSeconds;
  /** Seconds from t0 when following ended. */
  double drainEndSeconds;
  /** When the server's finished counter for the queue covered every accepted task; NaN if never seen. */
  double serverDrainSeconds = Double.NaN;
  boolean drainedInTime;

  // server readings
  Sampler.Sample before;
  Sampler.Sample afterLoad;
  Sampler.Sample afterDrain;
  /** GET /metrics at the start and at the end of the load, for the server's own latency histograms. */
  String metricsBefore;
  String metricsAfter;
  Long queueCapacity;
  Long queueSlots;

  // calibration
  boolean calibrated;
  double consumptionRate = Double.NaN;
  String consumptionSource = "";
  Recorder calibration;
  String calibrationNote;

  // bench
  double benchWindowThroughput = Double.NaN;
  double benchMedianSecond = Double.NaN;
  double benchMinSecond = Double.NaN;
  double benchEndToEnd = Double.NaN;
  String benchCounter = "";

  // idle-latency
  long idleMeasured;
  long idleNotStarted;
  String idleNote;

  /** CPU seconds this process used while the load ran (the generator shares the machine with the server). */
  double clientCpuSeconds = Double.NaN;

  int exitCode;
  final List<String> verdict = new ArrayList<>();

  Run(Options options) {
    this.options = options;
  }

  long lost() {
    return follower == null ? 0 : follower.acceptedTasks - follower.terminalTasks;
  }

  long status5xx() {
    return recorder.status5xx + (calibration == null ? 0 : calibration.status5xx);
  }

  long noAnswer() {
    return recorder.connectionErrors + recorder.timeouts
        + (calibration == null ? 0 : calibration.connectionErrors + calibration.timeouts);
  }
}
