package dev.taskline.load;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;

/**
 * Arrival times fixed in advance: piecewise-constant rates, one per phase. Request {@code k} of a
 * phase that starts at {@code S} with rate {@code r} is planned at {@code S + k/r} (or, with Poisson
 * arrivals, after exponential gaps of mean {@code 1/r}). The plan never depends on how fast the
 * server answers: this is what makes the generator an open model.
 */
final class Schedule {

  /** One constant-rate stretch of the run. */
  record Phase(String name, double seconds, double rate) {
  }

  private final List<Phase> phases;
  private final boolean poisson;
  private final Random random;

  private int phase;
  private long phaseStartNanos;
  private long k;
  private double poissonOffsetNanos;

  Schedule(List<Phase> phases, boolean poisson, long seed) {
    this.phases = List.copyOf(phases);
    this.poisson = poisson;
    this.random = new Random(seed);
  }

  List<Phase> phases() {
    return phases;
  }

  double totalSeconds() {
    double s = 0;
    for (Phase p : phases) {
      s += p.seconds();
    }
    return s;
  }

  /** Requests the plan holds (uniform arrivals: exact; Poisson: expected). */
  long plannedRequests() {
    long n = 0;
    for (Phase p : phases) {
      n += (long) Math.ceil(p.seconds() * p.rate());
    }
    return n;
  }

  /** Start of each phase in seconds from the start of the run. */
  List<Double> phaseStarts() {
    List<Double> starts = new ArrayList<>();
    double t = 0;
    for (Phase p : phases) {
      starts.add(t);
      t += p.seconds();
    }
    return starts;
  }

  /** The next planned send time in nanoseconds from the start, or -1 when the plan is done. */
  long next() {
    while (phase < phases.size()) {
      Phase p = phases.get(phase);
      long phaseNanos = (long) (p.seconds() * 1e9);
      if (p.rate() > 0) {
        long offset;
        if (poisson) {
          if (k > 0) {
            poissonOffsetNanos += -Math.log(1 - random.nextDouble()) / p.rate() * 1e9;
          }
          offset = (long) poissonOffsetNanos;
        } else {
          offset = (long) (k * 1e9 / p.rate());
        }
        if (offset < phaseNanos) {
          k++;
          return phaseStartNanos + offset;
        }
      }
      phaseStartNanos += phaseNanos;
      phase++;
      k = 0;
      poissonOffsetNanos = 0;
    }
    return -1;
  }

  /** The name of the phase planned at {@code seconds} from the start. */
  String phaseAt(double seconds) {
    double t = 0;
    for (Phase p : phases) {
      t += p.seconds();
      if (seconds < t) {
        return p.name();
      }
    }
    return phases.isEmpty() ? "" : phases.get(phases.size() - 1).name();
  }
}
