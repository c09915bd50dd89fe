package dev.taskline.load;

import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.VerticleBase;
import io.vertx.core.VertxOptions;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.function.Supplier;

/**
 * Entry point: runs one scenario against a Taskline server on this machine, prints a summary,
 * writes a self-contained HTML report, and exits 0 when no accepted task was lost and no request
 * got a 5xx (nor went unanswered), 1 otherwise, 2 on bad options.
 */
public final class LoadTest {

  private final Options options;
  private final Vertx vertx;
  /** Runs the load generator. */
  private final Context loadContext;
  /** Runs the sampler, the follower and the idle-latency loop, so their work never delays a planned send. */
  private final Context controlContext;
  private final Api api;
  private final Run run;
  private final PrintStream out = System.out;

  private LoadTest(Options options) {
    this.options = options;
    this.vertx = Vertx.vertx(new VertxOptions().setEventLoopPoolSize(2).setWorkerPoolSize(1)
        .setInternalBlockingPoolSize(1));
    // Each deployment gets its own event-loop context, round robin over the two loops (getOrCreateContext
    // would hand the main thread the same context twice).
    this.loadContext = newContext(vertx);
    this.controlContext = newContext(vertx);
    this.api = onLoop(() -> Future.succeededFuture(new Api(vertx, options)));
    this.run = new Run(options);
  }

  public static void main(String[] args) {
    Locale.setDefault(Locale.ROOT);
    Options options;
    try {
      options = Options.parse(args);
    } catch (Options.UsageException e) {
      if (e.getMessage() != null) {
        System.err.println("error: " + e.getMessage());
        System.err.println("(--help lists the options)");
        System.exit(2);
      }
      System.out.print(Options.usage());
      System.exit(0);
      return;
    } catch (Options.RefusedException e) {
      System.err.println("error: " + e.getMessage());
      System.exit(2);
      return;
    }
    int code;
    LoadTest test = new LoadTest(options);
    try {
      code = test.execute();
    } catch (RuntimeException e) {
      Throwable cause = e instanceof CompletionException && e.getCause() != null ? e.getCause() : e;
      System.err.println("error: " + cause);
      code = 1;
    } finally {
      test.close();
    }
    System.exit(code);
  }

  private int execute() {
    out.printf("Taskline load test: scenario %s against %s (queue %s, %d task(s) per request, payload %s)%n",
        options.scenario, options.target(), options.queue, options.batch, options.payloadJson.encode());
    if (!preflight()) {
      return 1;
    }
    switch (options.scenario) {
      case "bench" -> bench();
      case "idle-latency" -> idleLatency();
      default -> open();
    }
    decide();
    String summary = Report.text(run);
    out.println();
    out.print(summary);
    try {
      Files.createDirectories(options.reportPath.toAbsolutePath().getParent());
      Files.writeString(options.reportPath, Report.html(run), StandardCharsets.UTF_8);
      out.println("report: " + options.reportPath.toAbsolutePath().normalize());
    } catch (IOException e) {
      out.println("report: could not write " + options.reportPath + ": " + e);
    }
    return run.exitCode;
  }

  // ---- before ---------------------------------------------------------------------------------

  /** The server answers, the queue exists; note its capacity and slots. */
  private boolean preflight() {
    Api.Reply queues;
    try {
      queues = onLoop(() -> api.get("/api/queues"));
    } catch (RuntimeException e) {
      out.println("error: no answer from " + options.target() + "/api/queues: " + rootCause(e)
          + "\nIs the server running? See load-tests/README.md.");
      return false;
    }
    if (queues.status() != 200 || queues.json() == null) {
      out.println("error: GET /api/queues answered " + queues.status() + ": " + queues.text());
      return false;
    }
    List<String> names = new ArrayList<>();
    for (Object item : queues.json().getJsonArray("queues", new io.vertx.core.json.JsonArray())) {
      if (item instanceof JsonObject q) {
        names.add(q.getString("name"));
        if (options.queue.equals(q.getString("name"))) {
          run.queueCapacity = q.getLong("capacity");
          run.queueSlots = q.getLong("slots");
        }
      }
    }
    if (!names.contains(options.queue)) {
      out.println("error: the server has no queue '" + options.queue + "'; it has " + names
          + ". Pick one with --queue.");
      return false;
    }
    out.printf("queue %s: capacity %s, slots %s%n", options.queue, run.queueCapacity, run.queueSlots);
    warmUp();
    return true;
  }

  // ---- open scenarios -----------------------------------------------------------------------

  private void open() {
    Follower follower = onLoop(() -> Future.succeededFuture(new Follower(vertx, api, options.queue)));
    run.follower = follower;
    boolean needsConsumption = options.rate == null;
    if (needsConsumption) {
      if (options.capacityRate != null) {
        run.consumptionRate = options.capacityRate;
        run.consumptionSource = "given with --capacity-rate";
      } else {
        calibrate(follower);
      }
    }
    Schedule schedule = new Schedule(phases(), options.arrivals.equals("poisson"), options.seed);
    run.schedule = schedule;
    for (Schedule.Phase p : schedule.phases()) {
      run.plan.add(String.format("%-10s %6.1f s at %8.1f requests/s (%8.1f tasks/s)", p.name(), p.seconds(),
          p.rate(), p.rate() * options.batch));
    }
    run.plan.add(String.format("%d requests planned (%s arrivals%s), at most %d in flight", schedule.plannedRequests(),
        options.arrivals, options.arrivals.equals("poisson") ? ", seed " + options.seed : "", options.maxInFlight));
    projection(schedule);
    Recorder recorder = new Recorder(options.batch);
    long t0 = System.nanoTime();
    Sampler sampler = begin(recorder, t0);
    onLoop(() -> {
      sampler.start();
      if (options.followDuringRun) {
        follower.startBackground();
      }
      return Future.succeededFuture();
    });
    long cpu0 = cpuNanos();
    CompletableFuture<Void> load = asyncOn(loadContext, () -> new OpenGenerator(vertx, api, options, recorder, follower, schedule,
        t0).run());
    progressUntil(load, t0, schedule.totalSeconds(), loadContext);
    load.join();
    run.loadSeconds = (System.nanoTime() - t0) / 1e9;
    run.clientCpuSeconds = (cpuNanos() - cpu0) / 1e9;
    endOfLoad(sampler);
    drain(follower, sampler, t0);
  }

  /** Prints the plan and takes the run's first server reading, from which every delta counts. */
  private Sampler begin(Recorder recorder, long t0) {
    for (String line : run.plan) {
      out.println("plan: " + line);
    }
    run.recorder = recorder;
    Sampler sampler = new Sampler(vertx, api, options.queue, t0);
    run.sampler = sampler;
    run.before = onLoop(sampler::readOnce);
    run.metricsBefore = metricsText();
    return sampler;
  }

  /** The server readings at the end of the load, against which the first ones are compared. */
  private void endOfLoad(Sampler sampler) {
    run.afterLoad = onLoop(sampler::readOnce);
    run.metricsAfter = metricsText();
  }

  /** The server's Prometheus text, or null if it could not be read (the summary then says so). */
  private String metricsText() {
    return onLoop(api::metrics);
  }

  private List<Schedule.Phase> phases() {
    double c = run.consumptionRate / options.batch; // requests/s that the queue consumes
    int d = options.duration;
    List<Schedule.Phase> phases = new ArrayList<>();
    switch (options.scenario) {
      case "under" -> {
        double r = options.rate != null ? options.rate : 0.5 * c;
        phases.add(new Schedule.Phase("under", d, r));
        basis(r, 0.5, "under");
      }
      case "overload" -> {
        double r = options.rate != null ? options.rate : 2 * c;
        phases.add(new Schedule.Phase("overload", d, r));
        basis(r, 2, "overload");
      }
      case "burst" -> {
        double base = options.rate != null ? options.rate : 0.5 * c;
        double burst = Math.min(5, d / 3.0);
        double pre = Math.min(10, (d - burst) / 2.0);
        phases.add(new Schedule.Phase("base", pre, base));
        phases.add(new Schedule.Phase("burst 10x", burst, 10 * base));
        phases.add(new Schedule.Phase("base", d - pre - burst, base));
        basis(base, 0.5, "base");
      }
      case "recovery" -> {
        double r = options.rate != null ? options.rate : 2 * c;
        phases.add(new Schedule.Phase("overload", d / 2.0, r));
        phases.add(new Schedule.Phase("under", d - d / 2.0, r / 4));
        basis(r, 2, "overload");
      }
      case "steps" -> {
        double top = options.rate != null ? options.rate : 1.5 * c;
        double step = options.stepSeconds;
        if (d < 4 * step) {
          step = Math.max(1, d / 4.0);
        }
        int n = (int) Math.max(1, Math.ceil(d / step - 1e-9));
        for (int k = 1; k <= n; k++) {
          double len = Math.min(step, d - (k - 1) * step);
          phases.add(new Schedule.Phase("step " + k, len, top * k / n));
        }
        basis(top, 1.5, "last step");
      }
      default -> throw new IllegalStateException(options.scenario);
    }
    return phases;
  }

  private void basis(double requestRate, double factor, String what) {
    if (options.rate != null) {
      run.plan.add(String.format("%s rate %.1f requests/s given with --rate", what, requestRate));
    } else {
      run.plan.add(String.format("%s rate = %.2f x the consumption rate %.1f tasks/s (%s)", what, factor,
          run.consumptionRate, run.consumptionSource));
    }
  }

  /** For overload-like plans: when the backlog should hit capacity, if the consumption rate is known. */
  private void projection(Schedule schedule) {
    if (Double.isNaN(run.consumptionRate) || run.queueCapacity == null) {
      return;
    }
    double backlog = 0;
    double t = 0;
    for (Schedule.Phase p : schedule.phases()) {
      double growth = p.rate() * options.batch - run.consumptionRate;
      if (growth > 0 && backlog < run.queueCapacity) {
        double fill = (run.queueCapacity - backlog) / growth;
        if (fill <= p.seconds()) {
          run.plan.add(String.format("expect the backlog to reach capacity %d about %.0f s in (%s phase), then 429s"
              + " for the surplus of ~%.0f tasks/s", run.queueCapacity, t + fill, p.name(), growth));
          return;
        }
      }
      backlog = Math.max(0, Math.min(run.queueCapacity, backlog + growth * p.seconds()));
      t += p.seconds();
    }
  }

  /** Five seconds of saturating closed-loop submissions; the completion rate of the queue is the answer. */
  private void calibrate(Follower follower) {
    out.printf("calibrating: %d s of closed-loop submissions (concurrency %d) to measure the consumption rate of"
        + " queue %s...%n", options.calibrateS, options.concurrency, options.queue);
    Recorder recorder = new Recorder(options.batch);
    run.calibration = recorder;
    long t0 = System.nanoTime();
    Sampler sampler = new Sampler(vertx, api, options.queue, t0);
    long end = t0 + options.calibrateS * 1_000_000_000L;
    CompletableFuture<Void> load = asyncOn(loadContext, () -> new ClosedGenerator(vertx, api, options, recorder, follower, t0,
        options.concurrency, end, 20).run());
    sleep(1_000);
    Sampler.Sample a = onLoop(sampler::readOnce);
    load.join();
    Sampler.Sample b = onLoop(sampler::readOnce);
    run.calibrated = true;
    if (a.qFinished() == null || b.qFinished() == null || b.t() <= a.t()) {
      throw new IllegalStateException("calibration failed: GET /api/queues gave no 'finished' for queue "
          + options.queue + " (" + sampler.lastError + "); give the rate with --rate or --capacity-rate");
    }
    double rate = (b.qFinished() - a.qFinished()) / (b.t() - a.t());
    if (rate <= 0 && (b.qBacklog() == null || b.qBacklog() == 0)) {
      throw new IllegalStateException("calibration measured no completions in queue " + options.queue
          + " (accepted " + recorder.acceptedTasks + " tasks, " + recorder.rejected429 + " 429, statuses "
          + recorder.statuses + "); give the rate with --rate or --capacity-rate");
    }
    Long backlog = b.qBacklog();
    long slots = run.queueSlots == null ? 1 : run.queueSlots;
    out.printf("calibration: %.1f tasks/s completed while submitting (backlog at the end %s)%n", rate, backlog);
    // Then the pure consumption rate: completions while the backlog drains with no submissions.
    long deadline = System.nanoTime() + options.drainTimeoutS * 1_000_000_000L;
    Sampler.Sample s = b;
    Sampler.Sample lastBusy = b;
    while (s.qBacklog() != null && s.qBacklog() > 0 && System.nanoTime() < deadline) {
      sleep(500);
      s = onLoop(sampler::readOnce);
      if (s.qBacklog() != null && s.qBacklog() > slots && s.t() - b.t() <= 5.5) {
        lastBusy = s;
      }
    }
    double drainRate = Double.NaN;
    if (lastBusy.t() - b.t() >= 1 && lastBusy.qFinished() != null) {
      drainRate = (lastBusy.qFinished() - b.qFinished()) / (lastBusy.t() - b.t());
    }
    run.consumptionRate = Double.isNaN(drainRate) ? rate : Math.max(rate, drainRate);
    run.consumptionSource = String.format(Locale.ROOT, "calibrated: %d s closed loop, %d tasks accepted, %d 429;"
        + " completed %.1f/s while submitting, %s/s while draining", options.calibrateS, recorder.acceptedTasks,
        recorder.rejected429, rate, Double.isNaN(drainRate) ? "?" : String.format(Locale.ROOT, "%.1f", drainRate));
    if (backlog != null && backlog <= slots) {
      run.calibrationNote = "the queue never backed up during calibration (backlog " + backlog
          + "), so the measured rate is bounded by how fast the server accepts, not by how fast it consumes";
    }
    out.printf("calibration: %s tasks/s completed while draining; consumption rate %.1f tasks/s; backlog drained"
        + " (%s left)%n", Double.isNaN(drainRate) ? "?" : String.format(Locale.ROOT, "%.1f", drainRate),
        run.consumptionRate, s.qBacklog());
  }

  // ---- bench ----------------------------------------------------------------------------------

  private void bench() {
    Follower follower = onLoop(() -> Future.succeededFuture(new Follower(vertx, api, options.queue)));
    run.follower = follower;
    run.plan.add(String.format("closed loop: %d submitters, %d tasks per request, for %d s; on 429 a submitter"
        + " pauses 10 ms, doubling up to 160 ms while 429s go on", options.concurrency, options.batch, options.duration));
    Recorder recorder = new Recorder(options.batch);
    long t0 = System.nanoTime();
    Sampler sampler = begin(recorder, t0);
    long start = System.nanoTime();
    onLoop(() -> {
      sampler.start();
      if (options.followDuringRun) {
        follower.startBackground();
      }
      return Future.succeededFuture();
    });
    long end = start + options.duration * 1_000_000_000L;
    long cpu0 = cpuNanos();
    CompletableFuture<Void> load = asyncOn(loadContext, () -> new ClosedGenerator(vertx, api, options, recorder, follower, t0,
        options.concurrency, end, 10).run());
    progressUntil(load, t0, options.duration, loadContext);
    load.join();
    run.loadSeconds = (System.nanoTime() - t0) / 1e9;
    run.clientCpuSeconds = (cpuNanos() - cpu0) / 1e9;
    endOfLoad(sampler);
    // Throughput over the submission window from the server's own counter.
    boolean stats = run.before.finished() != null && run.afterLoad.finished() != null;
    Long f0 = stats ? run.before.finished() : run.before.qFinished();
    Long f1 = stats ? run.afterLoad.finished() : run.afterLoad.qFinished();
    run.benchCounter = stats ? "GET /api/stats finished" : "GET /api/queues finished of queue " + options.queue;
    if (f0 != null && f1 != null) {
      run.benchWindowThroughput = (f1 - f0) / (run.afterLoad.t() - run.before.t());
    }
    List<Double> perSecond = new ArrayList<>();
    List<Sampler.Sample> samples = new ArrayList<>(sampler.samples);
    for (int i = 1; i < samples.size(); i++) {
      Sampler.Sample a = samples.get(i - 1);
      Sampler.Sample b = samples.get(i);
      Long fa = stats ? a.finished() : a.qFinished();
      Long fb = stats ? b.finished() : b.qFinished();
      if (fa != null && fb != null && a.t() >= 5 && b.t() <= options.duration + 0.5 && b.t() - a.t() >= 0.5) {
        perSecond.add((fb - fa) / (b.t() - a.t()));
      }
    }
    if (!perSecond.isEmpty()) {
      Collections.sort(perSecond);
      run.benchMedianSecond = perSecond.get(perSecond.size() / 2);
      run.benchMinSecond = perSecond.get(0);
    }
    drain(follower, sampler, t0);
    if (run.drainedInTime && follower.acceptedTasks > 0 && !Double.isNaN(run.serverDrainSeconds)) {
      run.benchEndToEnd = follower.acceptedTasks / run.serverDrainSeconds;
    }
    if (!Double.isNaN(run.benchWindowThroughput)) {
      run.notes.add(String.format("to measure accept latency at 70%% of this throughput: mvn -q -f load-tests/pom.xml"
          + " compile exec:java -Dexec.args=\"--scenario under --url %s --queue %s --batch %d --payload %s"
          + " --rate %.1f\"", options.url, options.queue, options.batch,
          options.payloadJson.encode().replace("\"", ""),
          0.7 * run.benchWindowThroughput / options.batch));
    }
  }

  // ---- idle latency -------------------------------------------------------------------------

  private void idleLatency() {
    Follower follower = onLoop(() -> Future.succeededFuture(new Follower(vertx, api, options.queue)));
    run.follower = follower;
    run.plan.add(String.format("%d single tasks, one at a time (the next is sent when the previous has ended),"
        + " at most %d s, after %d sent the same way and not measured (warm-up)", options.count, options.duration,
        options.warmup));
    Recorder recorder = new Recorder(1);
    long t0 = System.nanoTime();
    Sampler sampler = begin(recorder, t0);
    if (run.before.waiting() != null && run.before.running() != null
        && run.before.waiting() + run.before.running() > 0) {
      run.idleNote = "the server was not idle at the start: waiting " + run.before.waiting() + ", running "
          + run.before.running();
      out.println("warning: " + run.idleNote);
    }
    onLoop(() -> {
      sampler.start();
      return Future.succeededFuture();
    });
    long end = t0 + options.duration * 1_000_000_000L;
    CompletableFuture<Void> load = async(() -> {
      Promise<Void> warm = Promise.promise();
      // Warm-up tasks are followed like the others (and count for "lost"), but their latencies go
      // to a recorder that is dropped.
      idleNext(new Recorder(1), follower, t0, end, options.count - options.warmup, api.submitBody(), warm);
      Promise<Void> done = Promise.promise();
      // The server's own timers count from here too: the warm-up is left out of them as well.
      warm.future().transform(w -> api.metrics()).onSuccess(text -> {
        run.metricsBefore = text;
        idleNext(recorder, follower, t0, end, 0, api.submitBody(), done);
      });
      return done.future();
    });
    progressUntil(load, t0, options.duration, controlContext);
    load.join();
    run.loadSeconds = (System.nanoTime() - t0) / 1e9;
    endOfLoad(sampler);
    drain(follower, sampler, t0);
  }

  private void idleNext(Recorder recorder, Follower follower, long t0, long end, int i, Buffer body,
      Promise<Void> done) {
    if (i >= options.count || System.nanoTime() >= end) {
      done.complete();
      return;
    }
    long sent = System.nanoTime();
    recorder.offered((sent - t0) / 1e9);
    recorder.sent((sent - t0) / 1e9, 0, 1);
    api.submitSingle(body).onComplete(ar -> {
      Submitter submitter = new Submitter(options, recorder, follower, t0);
      int status = submitter.record(ar, sent);
      if (status != 202) {
        vertx.setTimer(status == 429 ? 50 : 100, id -> idleNext(recorder, follower, t0, end, i + 1, body, done));
        return;
      }
      JsonObject accepted = ar.result().bodyAsJsonObject();
      String id = accepted == null ? null : accepted.getString("id");
      if (id == null) {
        idleNext(recorder, follower, t0, end, i + 1, body, done);
        return;
      }
      long giveUp = System.nanoTime() + 10_000_000_000L;
      idleFollow(recorder, follower, t0, id, giveUp, () -> idleNext(recorder, follower, t0, end, i + 1, body, done));
    });
  }

  /** Reads the task until it has ended, then records startedAt - createdAt. */
  private void idleFollow(Recorder recorder, Follower follower, long t0, String id, long giveUp, Runnable then) {
    vertx.setTimer(2, t -> api.get("/api/tasks/" + id).onComplete(ar -> {
      JsonObject task = ar.succeeded() && ar.result().status() == 200 ? ar.result().json() : null;
      String state = task == null ? null : task.getString("state");
      boolean ended = "succeeded".equals(state) || "failed".equals(state) || "cancelled".equals(state);
      if (!ended) {
        if (System.nanoTime() < giveUp) {
          idleFollow(recorder, follower, t0, id, giveUp, then);
        } else {
          run.idleNotStarted++;
          then.run();
        }
        return;
      }
      follower.observedTerminal(id, state);
      Instant created = instant(task.getString("createdAt"));
      Instant started = instant(task.getString("startedAt"));
      Instant finished = instant(task.getString("finishedAt"));
      double at = (System.nanoTime() - t0) / 1e9;
      if (created != null && started != null) {
        recorder.startLatency(at, ChronoUnit.MICROS.between(created, started));
        run.idleMeasured++;
      } else {
        run.idleNotStarted++;
        recorder.problem("task " + id + " ended without createdAt/startedAt: " + task.encode());
      }
      if (created != null && finished != null) {
        recorder.endToEndLatency.recordValue(Math.min(Recorder.MAX_MICROS,
            Math.max(0, ChronoUnit.MICROS.between(created, finished))));
      }
      then.run();
    }));
  }

  private static Instant instant(String text) {
    if (text == null) {
      return null;
    }
    try {
      return Instant.parse(text);
    } catch (RuntimeException e) {
      return null;
    }
  }

  // ---- after --------------------------------------------------------------------------------

  private void drain(Follower follower, Sampler sampler, long t0) {
    onLoop(() -> {
      follower.stopBackground();
      return Future.succeededFuture();
    });
    long open = onLoop(() -> Future.succeededFuture(follower.open()));
    out.printf("load over after %.1f s; following %d open task(s) to their end (at most %d s)...%n",
        run.loadSeconds, open, options.drainTimeoutS);
    long deadline = System.nanoTime() + options.drainTimeoutS * 1_000_000_000L;
    // The server's own counter says when the work was done; reading every task back (below) says
    // that none was lost, and takes longer than the work itself on a big run, so it is timed apart.
    long accepted = onLoop(() -> Future.succeededFuture(follower.acceptedTasks));
    Long finishedBefore = run.before == null ? null : run.before.qFinished();
    CompletableFuture<Long> serverDone = async(() -> serverDrained(accepted, finishedBefore, deadline));
    CompletableFuture<Long> drained = async(() -> follower.drain(deadline, () -> {
      Sampler.Sample last = sampler.last();
      return last == null ? null : last.qBacklog();
    }).map(v -> System.nanoTime()));
    while (!waitFor(drained, 5_000)) {
      long left = onLoop(() -> Future.succeededFuture(follower.open()));
      Sampler.Sample last = sampler.last();
      out.printf("  t=%.0fs still open %d, server backlog %s%n", (System.nanoTime() - t0) / 1e9, left,
          last == null ? "?" : last.qBacklog());
    }
    run.drainEndSeconds = (drained.join() - t0) / 1e9;
    Long serverDoneAt = serverDone.join();
    if (serverDoneAt != null) {
      run.serverDrainSeconds = (serverDoneAt - t0) / 1e9;
    }
    run.drainedInTime = onLoop(() -> Future.succeededFuture(follower.open())) == 0;
    onLoop(() -> {
      sampler.stop();
      return Future.succeededFuture();
    });
    run.afterDrain = onLoop(sampler::readOnce);
  }

  /**
   * Reads the queue's finished counter every 50 ms until it has grown by {@code accepted} since the
   * run began; the time it did, or null at the deadline or without a counter.
   */
  private Future<Long> serverDrained(long accepted, Long finishedBefore, long deadline) {
    if (finishedBefore == null) {
      return Future.succeededFuture(null);
    }
    return api.get("/api/queues").transform(ar -> {
      long now = System.nanoTime();
      JsonObject q = ar.succeeded() ? Sampler.queueIn(ar.result(), options.queue) : null;
      Long finished = q == null ? null : q.getLong("finished");
      if (finished != null && finished - finishedBefore >= accepted) {
        return Future.succeededFuture(now);
      }
      if (now >= deadline) {
        return Future.succeededFuture(null);
      }
      return vertx.timer(50, java.util.concurrent.TimeUnit.MILLISECONDS)
          .compose(v -> serverDrained(accepted, finishedBefore, deadline));
    });
  }

  private void decide() {
    long lost = run.lost();
    if (lost > 0) {
      run.verdict.add(lost + " accepted task(s) did not reach a terminal state within the drain timeout");
    }
    if (run.status5xx() > 0) {
      run.verdict.add(run.status5xx() + " request(s) answered 5xx");
    }
    if (run.noAnswer() > 0) {
      run.verdict.add(run.noAnswer() + " request(s) got no answer (connection error or timeout)");
    }
    if (run.follower != null && run.follower.acceptedTasks == 0) {
      run.verdict.add("no task was accepted at all");
    }
    run.exitCode = run.verdict.isEmpty() ? 0 : 1;
  }

  /** Waits up to {@code ms} for {@code f}; true when it is done. */
  private static boolean waitFor(CompletableFuture<?> f, long ms) {
    try {
      f.get(ms, java.util.concurrent.TimeUnit.MILLISECONDS);
      return true;
    } catch (java.util.concurrent.TimeoutException e) {
      return false;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted");
    } catch (java.util.concurrent.ExecutionException e) {
      return true;
    }
  }

  /** Opens connections and warms the client's code paths with GET /health/live; submits nothing. */
  private void warmUp() {
    asyncOn(loadContext, () -> {
      List<Future<Api.Reply>> all = new ArrayList<>();
      for (int i = 0; i < 200; i++) {
        all.add(api.warm());
      }
      return Future.join(all).transform(ar -> Future.<Void>succeededFuture());
    }).join();
  }

  /** Prints a line every 5 s while the load runs. */
  private void progressUntil(CompletableFuture<Void> load, long t0, double seconds, Context recorderContext) {
    while (!waitFor(load, 5_000)) {
      Recorder r = run.recorder;
      String counts = asyncOn(recorderContext, () -> Future.succeededFuture(String.format("sent %d, 202 %d, 429 %d,"
          + " 5xx %d, other %d, no answer %d, dropped %d", r.sentRequests, r.accepted202, r.rejected429, r.status5xx,
          r.statusOther, r.connectionErrors + r.timeouts, r.droppedRequests))).join();
      Long backlog = onLoop(() -> {
        Sampler.Sample s = run.sampler.last();
        return Future.succeededFuture(s == null ? null : s.qBacklog());
      });
      out.printf("  t=%.0f/%.0fs %s; server backlog %s%n", (System.nanoTime() - t0) / 1e9, seconds, counts,
          backlog == null ? "?" : backlog);
    }
  }

  // ---- plumbing -----------------------------------------------------------------------------

  private static Context newContext(Vertx vertx) {
    Context[] holder = new Context[1];
    vertx.deployVerticle(new VerticleBase() {
      @Override
      public Future<?> start() {
        holder[0] = context;
        return Future.succeededFuture();
      }
    }).toCompletionStage().toCompletableFuture().join();
    return holder[0];
  }

  /** Runs {@code work} on the control event loop and waits for its result. */
  private <T> T onLoop(Supplier<Future<T>> work) {
    return asyncOn(controlContext, work).join();
  }

  private <T> CompletableFuture<T> async(Supplier<Future<T>> work) {
    return asyncOn(controlContext, work);
  }

  private static <T> CompletableFuture<T> asyncOn(Context context, Supplier<Future<T>> work) {
    CompletableFuture<T> result = new CompletableFuture<>();
    context.runOnContext(v -> {
      try {
        work.get().onComplete(ar -> {
          if (ar.succeeded()) {
            result.complete(ar.result());
          } else {
            result.completeExceptionally(ar.cause());
          }
        });
      } catch (Throwable e) {
        result.completeExceptionally(e);
      }
    });
    return result;
  }

  /** CPU time of this process so far, or 0 where the JVM does not tell. */
  private static long cpuNanos() {
    java.lang.management.OperatingSystemMXBean os = java.lang.management.ManagementFactory.getOperatingSystemMXBean();
    if (os instanceof com.sun.management.OperatingSystemMXBean sun) {
      return Math.max(0, sun.getProcessCpuTime());
    }
    return 0;
  }

  private static void sleep(long ms) {
    try {
      Thread.sleep(ms);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted");
    }
  }

  private static String rootCause(Throwable e) {
    Throwable t = e;
    while (t.getCause() != null && t.getCause() != t) {
      t = t.getCause();
    }
    return t.toString();
  }

  private void close() {
    try {
      onLoop(() -> {
        api.close();
        return Future.succeededFuture();
      });
    } catch (RuntimeException ignored) {
      // closing anyway
    }
    vertx.close().toCompletionStage().toCompletableFuture().join();
  }
}
