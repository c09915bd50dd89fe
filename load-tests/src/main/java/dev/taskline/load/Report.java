package dev.taskline.load;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.HdrHistogram.Histogram;

/** The plain-text summary and the self-contained HTML report (inline SVG, no external files). */
final class Report {

  private Report() {
  }

  // ---- text ---------------------------------------------------------------------------------

  static String text(Run run) {
    Options o = run.options;
    Recorder r = run.recorder;
    Follower f = run.follower;
    StringBuilder b = new StringBuilder();
    line(b, "== Taskline load test: %s ==", o.scenario);
    line(b, "target       %s, queue %s (capacity %s, slots %s), %d task(s) per request, payload %s%s", o.target(),
        o.queue, run.queueCapacity, run.queueSlots, o.batch, o.payloadJson.encode(),
        o.tenant == null ? "" : ", as tenant " + o.tenant);
    for (int i = 0; i < run.plan.size(); i++) {
      line(b, "%s %s", i == 0 ? "plan        " : "            ", run.plan.get(i));
    }
    if (run.calibration != null) {
      Recorder c = run.calibration;
      line(b, "calibration  sent %d, 202 %d (%d tasks), 429 %d, 5xx %d, other %d, no answer %d -> consumption %.1f"
          + " tasks/s", c.sentRequests, c.accepted202, c.acceptedTasks, c.rejected429, c.status5xx, c.statusOther,
          c.connectionErrors + c.timeouts, run.consumptionRate);
      if (run.calibrationNote != null) {
        line(b, "             note: %s", run.calibrationNote);
      }
    }
    line(b, "requests     offered %d, sent %d, 202 %d, 429 %d, 5xx %d, other %d, no answer %d (connection errors %d,"
        + " timeouts %d), client-dropped %d", r.offeredRequests, r.sentRequests, r.accepted202, r.rejected429,
        r.status5xx, r.statusOther, r.connectionErrors + r.timeouts, r.connectionErrors, r.timeouts,
        r.droppedRequests);
    if (r.statuses.size() > 0) {
      line(b, "             statuses %s", r.statuses);
    }
    long calTasks = run.calibration == null ? 0 : run.calibration.acceptedTasks;
    line(b, "tasks        offered %d, accepted %d%s, rejected (429) %d, finished %d (%s), lost %d", r.offeredTasks,
        f.acceptedTasks, calTasks > 0 ? " (" + r.acceptedTasks + " + " + calTasks + " in calibration)" : "",
        r.rejectedTasks, f.terminalTasks, states(f.terminalByState), run.lost());
    if (run.lost() > 0) {
      line(b, "             lost by last known state: %s", f.lostByState);
      for (String example : f.lostExamples) {
        line(b, "               %s", example);
      }
    }
    String from = o.scenario.equals("bench") || o.scenario.equals("idle-latency")
        ? "from the actual send" : "from the planned send time";
    line(b, "accept ms    p50 %s, p90 %s, p99 %s, p99.9 %s, max %s (request to 202, %s; n=%d)",
        ms(r.acceptLatency, 50), ms(r.acceptLatency, 90), ms(r.acceptLatency, 99), ms(r.acceptLatency, 99.9),
        max(r.acceptLatency), from, r.acceptLatency.getTotalCount());
    line(b, "429 ms       p50 %s, p90 %s, p99 %s, p99.9 %s, max %s (n=%d)", ms(r.rejectLatency, 50),
        ms(r.rejectLatency, 90), ms(r.rejectLatency, 99), ms(r.rejectLatency, 99.9), max(r.rejectLatency),
        r.rejectLatency.getTotalCount());
    if (r.seconds.size() > 2 * SETTLE_SECONDS) {
      // A fresh server spends its first seconds compiling its hot paths on the same two cores; the
      // whole-run figures above include that, these show the run once it has settled.
      Histogram accepted = new Histogram(Recorder.MAX_MICROS, 2);
      Histogram refused = new Histogram(Recorder.MAX_MICROS, 2);
      for (int i = SETTLE_SECONDS; i < r.seconds.size(); i++) {
        accepted.add(r.seconds.get(i).acceptLatency);
        refused.add(r.seconds.get(i).rejectLatency);
      }
      line(b, "settled      from t=%d s: accept p50 %s, p99 %s, max %s (n=%d); 429 p50 %s, p99 %s, max %s (n=%d)",
          SETTLE_SECONDS, ms(accepted, 50), ms(accepted, 99), max(accepted), accepted.getTotalCount(),
          ms(refused, 50), ms(refused, 99), max(refused), refused.getTotalCount());
    }
    if (run.schedule != null) {
      line(b, "from send ms 202 p50 %s, p99 %s, max %s; 429 p50 %s, p99 %s, max %s (from the actual send: the"
          + " generator's own delay left out)", ms(r.acceptService, 50), ms(r.acceptService, 99), max(r.acceptService),
          ms(r.rejectService, 50), ms(r.rejectService, 99), max(r.rejectService));
    }
    if (run.metricsBefore != null && run.metricsAfter != null) {
      ServerHistogram accepted = serverHistogram(run, "taskline_accept_latency_seconds");
      ServerHistogram refused = serverHistogram(run, "taskline_refusal_latency_seconds");
      line(b, "server view  202 p50 <= %s, p99 <= %s ms (n=%d); 429 p50 <= %s, p99 <= %s ms (n=%d) (the node's own"
          + " timers, from its handler having the request to the answer, over the load; bucket bounds)", bound(accepted, 50), bound(accepted, 99),
          accepted.count(), bound(refused, 50), bound(refused, 99), refused.count());
      refusals(b, run);
    } else {
      line(b, "server view  - (GET /metrics could not be read at the start and the end of the load)");
    }
    if (o.scenario.equals("idle-latency")) {
      line(b, "start ms     p50 %s, p90 %s, p99 %s, p99.9 %s, max %s (startedAt - createdAt, journal timestamps;"
          + " 0 for a task dispatched at admission, see server wait; n=%d, not measured %d)", ms(r.startLatency, 50), ms(r.startLatency, 90),
          ms(r.startLatency, 99), ms(r.startLatency, 99.9), max(r.startLatency), r.startLatency.getTotalCount(),
          run.idleNotStarted);
      line(b, "end-to-end   p50 %s, p99 %s, max %s ms (createdAt to finishedAt)", ms(r.endToEndLatency, 50),
          ms(r.endToEndLatency, 99), max(r.endToEndLatency));
      if (run.metricsBefore != null && run.metricsAfter != null) {
        // startedAt is createdAt for a task dispatched at admission (both journaled by its insert),
        // so the node's wait timer, admission to handler start, is the submit-to-start figure.
        String queue = "queue=\"" + o.queue + "\"";
        ServerHistogram wait = ServerHistogram.parse(run.metricsAfter, "taskline_task_wait_seconds", queue)
            .since(ServerHistogram.parse(run.metricsBefore, "taskline_task_wait_seconds", queue));
        line(b, "server wait  p50 <= %s, p90 <= %s, p99 <= %s ms (n=%d) (submit to start: taskline_task_wait_seconds"
            + " of queue %s, from admission to the handler's start, warm-up left out; bucket bounds)", bound(wait, 50),
            bound(wait, 90), bound(wait, 99), wait.count(), o.queue);
      }
      if (run.idleNote != null) {
        line(b, "             warning: %s", run.idleNote);
      }
    }
    server(b, run);
    if (o.scenario.equals("bench")) {
      line(b, "throughput   %s tasks/s over the %d s submission window (%s), per-second median %s, min %s (from"
          + " t=5 s); end to end %s tasks/s (the server had finished all %d accepted tasks at t=%.1f s; the"
          + " client had read each one back as ended by t=%.1f s)",
          num(run.benchWindowThroughput), o.duration, run.benchCounter, num(run.benchMedianSecond),
          num(run.benchMinSecond), num(run.benchEndToEnd), f.acceptedTasks, run.serverDrainSeconds,
          run.drainEndSeconds);
      line(b, "             accepted %s tasks/s by the client over the window", num(r.acceptedTasks / run.loadSeconds));
    }
    line(b, "generator    max send lag %.1f ms (%d sends more than 10 ms late), peak in flight %d, run %.1f s%s",
        r.maxSendLagNanos / 1e6, r.sendLagOver10ms, r.peakInFlight, run.loadSeconds,
        Double.isNaN(run.clientCpuSeconds) ? "" : String.format(Locale.ROOT, "; this process used %.1f CPU s"
            + " (%.0f%% of one core) during the load", run.clientCpuSeconds,
            100 * run.clientCpuSeconds / Math.max(run.loadSeconds, 1e-9)));
    line(b, "follow       %s after %.1f s; %d poll requests, %d poll errors%s",
        run.drainedInTime ? "every accepted task ended" : "drain timeout hit", run.drainEndSeconds, f.pollRequests,
        f.pollErrors, f.lastPollError == null ? "" : " (last: " + f.lastPollError + ")");
    if (!r.errorKinds.isEmpty()) {
      line(b, "no answer    %s", r.errorKinds);
    }
    for (String p : r.firstProblems) {
      line(b, "problem      %s", p);
    }
    for (String n : run.notes) {
      line(b, "note         %s", n);
    }
    if (run.exitCode == 0) {
      line(b, "result       OK: nothing lost, no 5xx, every request answered (exit 0)");
    } else {
      line(b, "result       FAILED (exit %d): %s", run.exitCode, String.join("; ", run.verdict));
    }
    return b.toString();
  }

  private static void server(StringBuilder b, Run run) {
    Sampler s = run.sampler;
    long peakWaiting = -1;
    long peakRunning = -1;
    long peakTotalWaiting = -1;
    for (Sampler.Sample x : s.samples) {
      if (x.qWaiting() != null) {
        peakWaiting = Math.max(peakWaiting, x.qWaiting());
      }
      if (x.qRunning() != null) {
        peakRunning = Math.max(peakRunning, x.qRunning());
      }
      if (x.waiting() != null) {
        peakTotalWaiting = Math.max(peakTotalWaiting, x.waiting());
      }
    }
    line(b, "server       peak backlog %s waiting in queue %s (capacity %s), %s in all queues; peak running %s",
        peakWaiting < 0 ? "?" : peakWaiting, run.options.queue, run.queueCapacity,
        peakTotalWaiting < 0 ? "?" : peakTotalWaiting, peakRunning < 0 ? "?" : peakRunning);
    Sampler.Sample a = run.before;
    Sampler.Sample z = run.afterLoad;
    if (a != null && z != null && z.t() > a.t()) {
      double secs = z.t() - a.t();
      String completed = a.qFinished() != null && z.qFinished() != null
          ? num((z.qFinished() - a.qFinished()) / secs) : "?";
      line(b, "throughput   during the load (%.1f s): accepted %s tasks/s (client), completed %s tasks/s (queue"
          + " finished counter)", secs, num(run.recorder.acceptedTasks / secs), completed);
    }
    Sampler.Sample e = run.afterDrain;
    if (a != null && e != null) {
      line(b, "counters     server deltas over the run for queue %s: accepted %s, rejected %s, finished %s"
          + " (the client saw %d accepted and %d rejected tasks)", run.options.queue, delta(a.qAccepted(), e.qAccepted()),
          delta(a.qRejected(), e.qRejected()), delta(a.qFinished(), e.qFinished()), run.recorder.acceptedTasks,
          run.recorder.rejectedTasks);
    }
    if (s.statsChecked + s.statsUncheckable > 0) {
      line(b, "invariant    accepted - finished == waiting + running on GET /api/stats: held on %d of %d samples%s",
          s.statsHeld, s.statsChecked,
          s.statsUncheckable > 0 ? " (" + s.statsUncheckable + " samples lacked a field)" : "");
      for (String v : s.statsViolations) {
        line(b, "               %s", v);
      }
      line(b, "             the same per queue on GET /api/queues: held on %d of %d samples", s.queueHeld,
          s.queueChecked);
      for (String v : s.queueViolations) {
        line(b, "               %s", v);
      }
    }
    memory(b, s.memory);
    line(b, "sampling     %d samples, %d failed%s, %d skipped (previous still open); slowest stats+queues read %.1f ms",
        s.samples.size(), s.failedReads, s.lastError == null ? "" : " (last: " + s.lastError + ")", s.skippedTicks,
        s.maxStatsMillis);
  }

  /**
   * The server's resident set size from t = SETTLE_SECONDS to the last reading, and the range of its
   * heap in use: under overload both should stay flat once the queue is full. Readings before then
   * count when the run was shorter; a server without one of the series gives the other alone.
   */
  private static void memory(StringBuilder b, List<Sampler.Memory> readings) {
    boolean settled = readings.stream().anyMatch(m -> m.t() >= SETTLE_SECONDS);
    Sampler.Memory first = null;
    Sampler.Memory last = null;
    double peakRss = Double.NaN;
    double minHeap = Double.NaN;
    double maxHeap = Double.NaN;
    for (Sampler.Memory m : readings) {
      if (settled && m.t() < SETTLE_SECONDS) {
        continue;
      }
      if (m.rssBytes() != null && m.rssBytes() > 0) {
        first = first == null ? m : first;
        last = m;
        peakRss = Double.isNaN(peakRss) ? m.rssBytes() : Math.max(peakRss, m.rssBytes());
      }
      if (m.heapBytes() != null) {
        minHeap = Double.isNaN(minHeap) ? m.heapBytes() : Math.min(minHeap, m.heapBytes());
        maxHeap = Double.isNaN(maxHeap) ? m.heapBytes() : Math.max(maxHeap, m.heapBytes());
      }
    }
    if (first == null && Double.isNaN(minHeap)) {
      line(b, "memory       no reading of the server's memory (%d answers to GET /metrics)", readings.size());
      return;
    }
    String rss = first == null ? "server RSS not reported (process_resident_memory_bytes)"
        : String.format(Locale.ROOT, "server RSS %s MB at t=%.0f s, %s MB at t=%.0f s (%+.0f%%), peak %s MB",
            mb(first.rssBytes()), first.t(), mb(last.rssBytes()), last.t(),
            100 * (last.rssBytes() - first.rssBytes()) / first.rssBytes(), mb(peakRss));
    String heap = Double.isNaN(minHeap) ? "heap in use not reported"
        : "heap in use " + mb(minHeap) + " to " + mb(maxHeap) + " MB";
    line(b, "memory       %s; %s %s (GET /metrics every %d s; the heap rises and falls with each young collection)",
        rss, heap, settled ? "from t=" + SETTLE_SECONDS + " s" : "over the run", Sampler.MEMORY_EVERY);
  }

  /** The queue's refusals over the load by the server's reason, from taskline_tasks_rejected_total. */
  private static void refusals(StringBuilder b, Run run) {
    List<String> parts = new ArrayList<>();
    for (String reason : List.of("queue_full", "scheduled_full", "tenant_limit", "journal_busy", "shutting_down")) {
      String series = "taskline_tasks_rejected_total";
      String labels = "queue=\"" + run.options.queue + "\",reason=\"" + reason + "\"";
      Double before = PrometheusText.sum(run.metricsBefore, series, labels);
      Double after = PrometheusText.sum(run.metricsAfter, series, labels);
      if (before != null && after != null && after > before) {
        parts.add(String.format(Locale.ROOT, "%s %.0f", reason, after - before));
      }
    }
    line(b, "refused      tasks by the server's reason over the load, queue %s: %s", run.options.queue,
        parts.isEmpty() ? "none" : String.join(", ", parts));
  }

  private static String mb(double bytes) {
    return String.format(Locale.ROOT, "%.0f", bytes / (1024 * 1024));
  }

  private static String delta(Long from, Long to) {
    return from == null || to == null ? "?" : String.valueOf(to - from);
  }

  private static String states(Map<String, Long> byState) {
    List<String> parts = new ArrayList<>();
    byState.forEach((k, v) -> parts.add(k + " " + v));
    return String.join(", ", parts);
  }

  static String ms(Histogram h, double p) {
    double v = Recorder.ms(h, p);
    return Double.isNaN(v) ? "-" : fmt(v);
  }

  private static ServerHistogram serverHistogram(Run run, String name) {
    return ServerHistogram.parse(run.metricsAfter, name).since(ServerHistogram.parse(run.metricsBefore, name));
  }

  private static String bound(ServerHistogram h, double p) {
    double v = h.percentileMs(p);
    return Double.isNaN(v) ? "-" : Double.isInfinite(v) ? "inf" : fmt(v);
  }

  static String max(Histogram h) {
    double v = Recorder.maxMs(h);
    return Double.isNaN(v) ? "-" : fmt(v);
  }

  private static String fmt(double ms) {
    if (ms < 10) {
      return String.format(Locale.ROOT, "%.2f", ms);
    }
    if (ms < 100) {
      return String.format(Locale.ROOT, "%.1f", ms);
    }
    return String.format(Locale.ROOT, "%.0f", ms);
  }

  private static String num(double v) {
    return Double.isNaN(v) || Double.isInfinite(v) ? "?" : String.format(Locale.ROOT, "%.1f", v);
  }

  private static void line(StringBuilder b, String format, Object... args) {
    b.append(String.format(Locale.ROOT, format, args)).append('\n');
  }

  // ---- HTML ---------------------------------------------------------------------------------

  static String html(Run run) {
    Options o = run.options;
    Recorder r = run.recorder;
    Sampler s = run.sampler;
    int n = r.seconds.size();
    double xMax = Math.max(n, run.drainEndSeconds);
    for (Sampler.Sample x : s.samples) {
      xMax = Math.max(xMax, x.t());
    }
    xMax = Math.max(1, Math.ceil(xMax));

    double[] secX = new double[n];
    double[] offered = new double[n];
    double[] accepted = new double[n];
    double[] rejected = new double[n];
    double[] dropped = new double[n];
    double[] errors = new double[n];
    double[] p50 = new double[n];
    double[] p99 = new double[n];
    double[] r50 = new double[n];
    double[] r99 = new double[n];
    double[] s50 = new double[n];
    double[] s99 = new double[n];
    for (int i = 0; i < n; i++) {
      Recorder.Second sec = r.seconds.get(i);
      secX[i] = i + 0.5;
      offered[i] = sec.offeredTasks;
      accepted[i] = sec.acceptedTasks;
      rejected[i] = sec.rejectedTasks;
      dropped[i] = sec.droppedRequests * (double) r.batch;
      errors[i] = sec.status5xx + sec.statusOther + sec.errors;
      p50[i] = Recorder.ms(sec.acceptLatency, 50);
      p99[i] = Recorder.ms(sec.acceptLatency, 99);
      r50[i] = Recorder.ms(sec.rejectLatency, 50);
      r99[i] = Recorder.ms(sec.rejectLatency, 99);
      s50[i] = Recorder.ms(sec.startLatency, 50);
      s99[i] = Recorder.ms(sec.startLatency, 99);
    }
    List<Sampler.Sample> samples = s.samples;
    int m = samples.size();
    double[] sx = new double[m];
    double[] waiting = new double[m];
    double[] running = new double[m];
    double[] capacity = new double[m];
    double[] completed = new double[m];
    double[] serverRate = new double[m];
    for (int i = 0; i < m; i++) {
      Sampler.Sample x = samples.get(i);
      sx[i] = x.t();
      waiting[i] = x.qWaiting() == null ? Double.NaN : x.qWaiting();
      running[i] = x.qRunning() == null ? Double.NaN : x.qRunning();
      capacity[i] = x.qCapacity() == null ? Double.NaN : x.qCapacity();
      serverRate[i] = x.qCompletionRate() == null ? Double.NaN : x.qCompletionRate();
      completed[i] = Double.NaN;
      // Rate against the latest earlier sample at least half a second older (extra readings before and
      // after the load sit close to a periodic one).
      for (int j = i - 1; j >= 0; j--) {
        Sampler.Sample p = samples.get(j);
        if (x.t() - p.t() >= 0.5) {
          if (p.qFinished() != null && x.qFinished() != null) {
            completed[i] = (x.qFinished() - p.qFinished()) / (x.t() - p.t());
          }
          break;
        }
      }
    }
    List<Marker> markers = new ArrayList<>();
    if (run.schedule != null) {
      List<Double> starts = run.schedule.phaseStarts();
      for (int i = 0; i < starts.size(); i++) {
        markers.add(new Marker(starts.get(i), run.schedule.phases().get(i).name()));
      }
    }
    markers.add(new Marker(run.loadSeconds, "load ends"));

    StringBuilder h = new StringBuilder();
    h.append("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>Taskline load test: ")
        .append(esc(o.scenario)).append("</title>\n<style>\n")
        .append("body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:24px auto;max-width:1000px;"
            + "color:#222;padding:0 12px}\n")
        .append("h1{font-size:22px}h2{font-size:17px;margin-top:28px}pre{background:#f6f6f4;padding:12px;"
            + "overflow-x:auto;font-size:12.5px;line-height:1.35;border-radius:4px}\n")
        .append(".ok{color:#1a7f37;font-weight:600}.bad{color:#c62828;font-weight:600}\n")
        .append("svg{display:block;margin:8px 0 4px;background:#fff;border:1px solid #e3e3e3;border-radius:4px}\n")
        .append("svg text{font:11px system-ui,sans-serif;fill:#444}.axis{stroke:#999;stroke-width:1}"
            + ".grid{stroke:#eee;stroke-width:1}\n")
        .append("table{border-collapse:collapse;font-size:12px}td,th{padding:2px 8px;text-align:right;"
            + "border-bottom:1px solid #eee}th{background:#f6f6f4;position:sticky;top:0}\n")
        .append("p.help{font-size:13.5px;color:#444;max-width:900px}\n")
        .append("</style></head><body>\n");
    h.append("<h1>Taskline load test: ").append(esc(o.scenario)).append("</h1>\n");
    h.append("<p>").append(esc(run.startedAt.toString())).append(" &middot; ").append(esc(o.target()))
        .append(" &middot; queue <b>").append(esc(o.queue)).append("</b> &middot; result: ")
        .append(run.exitCode == 0 ? "<span class=\"ok\">OK</span>"
            : "<span class=\"bad\">FAILED: " + esc(String.join("; ", run.verdict)) + "</span>")
        .append("</p>\n");
    h.append("<p class=\"help\">").append(esc(scenarioHelp(o.scenario))).append("</p>\n");
    h.append("<h2>Summary</h2>\n<pre>").append(esc(text(run))).append("</pre>\n");

    h.append("<h2>Rates (tasks per second)</h2>\n<p class=\"help\">Offered: tasks the plan sent in that second"
        + " (requests &times; batch size), by planned send time. Accepted (202) and rejected (429): tasks in the answers"
        + " that arrived in that second. Completed: tasks of the queue that ended, from the server's finished counter."
        + " Dropped: due requests the client could not send because too many were open. Errors: requests (5xx, other"
        + " statuses, no answer).</p>\n");
    List<Series> rates = new ArrayList<>();
    rates.add(new Series("offered", "#7b7b7b", secX, offered, true));
    rates.add(new Series("accepted (202)", "#1a7f37", secX, accepted, false));
    rates.add(new Series("rejected (429)", "#e36209", secX, rejected, false));
    rates.add(new Series("completed", "#0969da", sx, completed, false));
    if (sum(dropped) > 0) {
      rates.add(new Series("client-dropped", "#8250df", secX, dropped, false));
    }
    if (sum(errors) > 0) {
      rates.add(new Series("errors (requests)", "#c62828", secX, errors, false));
    }
    h.append(chart("tasks/s", rates, xMax, markers, false));

    h.append("<h2>Backlog of queue ").append(esc(o.queue)).append("</h2>\n<p class=\"help\">Waiting and running"
        + " tasks of the queue, read from GET /api/queues once per second; the dashed line is the queue's capacity."
        + " Under overload the waiting line should plateau at capacity, not grow.</p>\n");
    List<Series> backlog = new ArrayList<>();
    backlog.add(new Series("waiting", "#0969da", sx, waiting, false));
    backlog.add(new Series("running", "#1a7f37", sx, running, false));
    backlog.add(new Series("capacity", "#c62828", sx, capacity, true));
    h.append(chart("tasks", backlog, xMax, markers, false));

    if (!s.memory.isEmpty()) {
      h.append("<h2>Server memory (MB)</h2>\n<p class=\"help\">The server's resident set size and its heap in use"
          + " (every heap pool), read from GET /metrics every ").append(Sampler.MEMORY_EVERY).append(" s. The heap"
          + " rises and falls with each young collection; under overload both should level off once the queue is"
          + " full.</p>\n");
      int k = s.memory.size();
      double[] mx = new double[k];
      double[] heap = new double[k];
      double[] rss = new double[k];
      for (int i = 0; i < k; i++) {
        Sampler.Memory x = s.memory.get(i);
        mx[i] = x.t();
        heap[i] = x.heapBytes() == null ? Double.NaN : x.heapBytes() / (1024 * 1024);
        rss[i] = x.rssBytes() == null ? Double.NaN : x.rssBytes() / (1024 * 1024);
      }
      List<Series> mem = new ArrayList<>();
      mem.add(new Series("RSS", "#8250df", mx, rss, false));
      mem.add(new Series("heap in use", "#0969da", mx, heap, false));
      h.append(chart("MB", mem, xMax, markers, false));
    }

    boolean idle = o.scenario.equals("idle-latency");
    h.append("<h2>Latency per second (ms, log scale)</h2>\n<p class=\"help\">")
        .append(idle ? "Submit-to-start latency (startedAt - createdAt, both server timestamps) and accept latency"
            + " (request to 202) of the tasks measured in each second."
            : "Accept latency (request to 202) and 429 latency of the answers that arrived in each second, measured"
            + (o.scenario.equals("bench") ? " from the actual send (closed loop)."
            : " from the planned send time, so time spent waiting for a free connection or for the server counts."))
        .append("</p>\n");
    List<Series> lat = new ArrayList<>();
    if (idle) {
      lat.add(new Series("start p50", "#0969da", secX, s50, false));
      lat.add(new Series("start p99", "#c62828", secX, s99, false));
    }
    lat.add(new Series("202 p50", idle ? "#57ab5a" : "#0969da", secX, p50, idle));
    lat.add(new Series("202 p99", idle ? "#e36209" : "#c62828", secX, p99, idle));
    if (r.rejectLatency.getTotalCount() > 0) {
      lat.add(new Series("429 p50", "#57ab5a", secX, r50, true));
      lat.add(new Series("429 p99", "#e36209", secX, r99, true));
    }
    h.append(chart("ms", lat, xMax, markers, true));

    if (!Double.isNaN(max(serverRate))) {
      h.append("<h2>Server completion rate</h2>\n<p class=\"help\">completionRate of the queue as GET /api/queues"
          + " reports it, next to the rate computed from its finished counter.</p>\n");
      List<Series> cr = new ArrayList<>();
      cr.add(new Series("completionRate (server)", "#8250df", sx, serverRate, false));
      cr.add(new Series("finished counter delta", "#0969da", sx, completed, true));
      h.append(chart("tasks/s", cr, xMax, markers, false));
    }

    h.append("<h2>Per second</h2>\n<details><summary>table</summary>\n<table><tr><th>s</th><th>offered req</th>"
        + "<th>sent</th><th>dropped</th><th>202</th><th>429</th><th>5xx</th><th>other</th><th>no answer</th>"
        + "<th>202 p50 ms</th><th>202 p99 ms</th><th>429 p99 ms</th><th>max send lag ms</th>")
        .append(idle ? "<th>start p50 ms</th><th>start p99 ms</th>" : "").append("</tr>\n");
    for (int i = 0; i < n; i++) {
      Recorder.Second sec = r.seconds.get(i);
      h.append("<tr><td>").append(i).append("</td><td>").append(sec.offeredRequests).append("</td><td>")
          .append(sec.sentRequests).append("</td><td>").append(sec.droppedRequests).append("</td><td>")
          .append(sec.accepted202).append("</td><td>").append(sec.rejected429).append("</td><td>")
          .append(sec.status5xx).append("</td><td>").append(sec.statusOther).append("</td><td>").append(sec.errors)
          .append("</td><td>").append(cell(p50[i])).append("</td><td>").append(cell(p99[i])).append("</td><td>")
          .append(cell(r99[i])).append("</td><td>").append(cell(sec.maxSendLagNanos / 1e6)).append("</td>");
      if (idle) {
        h.append("<td>").append(cell(s50[i])).append("</td><td>").append(cell(s99[i])).append("</td>");
      }
      h.append("</tr>\n");
    }
    h.append("</table></details>\n");
    h.append("<details><summary>server samples</summary>\n<table><tr><th>t s</th><th>accepted</th><th>finished</th>"
        + "<th>rejected</th><th>waiting</th><th>running</th><th>a-f</th><th>w+r</th><th>queue waiting</th>"
        + "<th>queue running</th><th>read ms</th></tr>\n");
    for (Sampler.Sample x : samples) {
      String af = x.accepted() != null && x.finished() != null ? String.valueOf(x.accepted() - x.finished()) : "";
      String wr = x.waiting() != null && x.running() != null ? String.valueOf(x.waiting() + x.running()) : "";
      h.append("<tr><td>").append(String.format(Locale.ROOT, "%.1f", x.t())).append("</td><td>")
          .append(str(x.accepted())).append("</td><td>").append(str(x.finished())).append("</td><td>")
          .append(str(x.rejected())).append("</td><td>").append(str(x.waiting())).append("</td><td>")
          .append(str(x.running())).append("</td><td>").append(af).append("</td><td")
          .append(af.equals(wr) ? "" : " class=\"bad\"").append(">").append(wr).append("</td><td>")
          .append(str(x.qWaiting())).append("</td><td>").append(str(x.qRunning())).append("</td><td>")
          .append(String.format(Locale.ROOT, "%.1f", x.statsMillis())).append("</td></tr>\n");
    }
    h.append("</table></details>\n");
    h.append("<h2>How to read this</h2>\n<p class=\"help\">The generator is an open model: every request has a"
        + " planned send time fixed before the run (t0 + i/rate), and a slow answer never delays the next request."
        + " Latency is measured from the planned time, so it includes any wait for a connection (no coordinated"
        + " omission). A request that is due while the in-flight bound is reached is not sent and counts as"
        + " client-dropped; the plan goes on. Every accepted task is followed by polling until it is succeeded,"
        + " failed or cancelled; tasks still open when the drain timeout ends are lost. The run fails (exit 1) on"
        + " any lost task, any 5xx and any request without an answer.</p>\n");
    h.append("</body></html>\n");
    return h.toString();
  }

  private static String scenarioHelp(String scenario) {
    return switch (scenario) {
      case "under" -> "Constant arrivals below the consumption rate: everything should be accepted with low latency,"
          + " the backlog stays near zero and completions track arrivals.";
      case "overload" -> "Arrivals at twice the consumption rate: the backlog should rise to the queue's capacity and"
          + " stay there, the surplus should get fast 429s, completions stay at the consumption rate, and nothing"
          + " should be lost or answered 5xx.";
      case "burst" -> "A base rate, then ten times that for five seconds: the queue absorbs the burst up to its"
          + " capacity (the rest gets 429), then drains back while the base rate goes on.";
      case "recovery" -> "Overload for the first half, then under capacity: the backlog fills to capacity, then"
          + " drains; 429s stop once there is room again.";
      case "steps" -> "The rate steps up at fixed intervals: where completions stop following the offered rate is the"
          + " consumption rate; past it the backlog builds up and 429s begin.";
      case "bench" -> "Closed-loop benchmark: concurrent submitters send batches as fast as the server accepts them;"
          + " throughput is what the server completes per second.";
      case "idle-latency" -> "Single tasks one at a time on an idle server: how long a task waits between being"
          + " journaled (createdAt) and starting to run (startedAt).";
      default -> "";
    };
  }

  // ---- SVG charts -----------------------------------------------------------------------------

  record Series(String name, String color, double[] xs, double[] ys, boolean dashed) {
  }

  record Marker(double x, String label) {
  }

  /** Seconds at the start of a run left out of the "settled" figures. */
  static final int SETTLE_SECONDS = 10;

  private static final int W = 960;
  private static final int H = 300;
  private static final int ML = 62;
  private static final int MR = 16;
  private static final int MT = 34;
  private static final int MB = 34;

  static String chart(String unit, List<Series> series, double xMax, List<Marker> markers, boolean logY) {
    double yMax = 0;
    double yMin = Double.POSITIVE_INFINITY;
    for (Series s : series) {
      for (double v : s.ys()) {
        if (!Double.isNaN(v)) {
          yMax = Math.max(yMax, v);
          if (v > 0) {
            yMin = Math.min(yMin, v);
          }
        }
      }
    }
    StringBuilder b = new StringBuilder();
    b.append("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"").append(W).append("\" height=\"").append(H)
        .append("\" viewBox=\"0 0 ").append(W).append(' ').append(H).append("\">\n");
    double pw = W - ML - MR;
    double ph = H - MT - MB;
    double lo;
    double hi;
    List<Double> yTicks = new ArrayList<>();
    if (logY) {
      if (yMax <= 0 || Double.isInfinite(yMin)) {
        yMin = 0.1;
        yMax = 1;
      }
      lo = Math.floor(Math.log10(yMin));
      hi = Math.ceil(Math.log10(yMax));
      if (hi <= lo) {
        hi = lo + 1;
      }
      for (double e = lo; e <= hi + 1e-9; e++) {
        yTicks.add(Math.pow(10, e));
        if (e < hi - 1e-9 && hi - lo <= 4) {
          yTicks.add(2 * Math.pow(10, e));
          yTicks.add(5 * Math.pow(10, e));
        }
      }
    } else {
      double step = niceStep(yMax <= 0 ? 1 : yMax, 5);
      lo = 0;
      hi = Math.max(step, Math.ceil(yMax / step) * step);
      for (double v = 0; v <= hi + step / 2; v += step) {
        yTicks.add(v);
      }
    }
    final double fLo = lo;
    final double fHi = hi;
    java.util.function.DoubleUnaryOperator yPix = v -> {
      double f = logY ? (Math.log10(Math.max(v, Math.pow(10, fLo))) - fLo) / (fHi - fLo) : (v - fLo) / (fHi - fLo);
      return MT + ph - f * ph;
    };
    java.util.function.DoubleUnaryOperator xPix = x -> ML + x / xMax * pw;
    // grid and axes
    for (double v : yTicks) {
      double y = yPix.applyAsDouble(v);
      b.append(String.format(Locale.ROOT, "<line class=\"grid\" x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\"/>",
          ML, y, W - MR, y));
      b.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n", ML - 6,
          y + 4, tick(v)));
    }
    double xStep = niceStep(xMax, 10);
    for (double x = 0; x <= xMax + 1e-9; x += xStep) {
      double px = xPix.applyAsDouble(x);
      b.append(String.format(Locale.ROOT, "<line class=\"grid\" x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\"/>", px,
          MT, px, MT + (int) ph));
      b.append(String.format(Locale.ROOT, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%s</text>\n", px,
          H - MB + 15, tick(x)));
    }
    b.append(String.format(Locale.ROOT, "<line class=\"axis\" x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\"/>", ML, MT, ML,
        MT + (int) ph));
    b.append(String.format(Locale.ROOT, "<line class=\"axis\" x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\"/>\n", ML,
        MT + (int) ph, W - MR, MT + (int) ph));
    b.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">seconds</text>", W - MR,
        H - 4));
    b.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%d\">%s</text>\n", 6, MT - 8, esc(unit)));
    // phase markers
    for (Marker mk : markers) {
      if (mk.x() < 0 || mk.x() > xMax) {
        continue;
      }
      double px = xPix.applyAsDouble(mk.x());
      b.append(String.format(Locale.ROOT, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#bbb\""
          + " stroke-dasharray=\"4 3\"/>", px, MT, px, MT + (int) ph));
      boolean right = px > W - MR - 90;
      b.append(String.format(Locale.ROOT, "<text x=\"%.1f\" y=\"%d\" fill=\"#888\"%s>%s</text>\n",
          right ? px - 3 : px + 3, MT + 11, right ? " text-anchor=\"end\"" : "", esc(mk.label())));
    }
    // series
    for (Series s : series) {
      StringBuilder path = new StringBuilder();
      boolean pen = false;
      int points = 0;
      for (int i = 0; i < s.xs().length && i < s.ys().length; i++) {
        double v = s.ys()[i];
        if (Double.isNaN(v) || (logY && v <= 0)) {
          pen = false;
          continue;
        }
        path.append(pen ? " L" : " M").append(String.format(Locale.ROOT, "%.1f %.1f",
            xPix.applyAsDouble(s.xs()[i]), yPix.applyAsDouble(v)));
        pen = true;
        points++;
      }
      if (points == 0) {
        continue;
      }
      b.append("<path fill=\"none\" stroke=\"").append(s.color()).append("\" stroke-width=\"1.8\"")
          .append(s.dashed() ? " stroke-dasharray=\"6 4\"" : "").append(" d=\"").append(path.toString().trim())
          .append("\"><title>").append(esc(s.name())).append("</title></path>\n");
      if (points < 4) {
        for (int i = 0; i < s.xs().length && i < s.ys().length; i++) {
          double v = s.ys()[i];
          if (!Double.isNaN(v) && !(logY && v <= 0)) {
            b.append(String.format(Locale.ROOT, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"2.5\" fill=\"%s\"/>",
                xPix.applyAsDouble(s.xs()[i]), yPix.applyAsDouble(v), s.color()));
          }
        }
      }
    }
    // legend
    double lx = ML + 10;
    for (Series s : series) {
      b.append(String.format(Locale.ROOT, "<line x1=\"%.1f\" y1=\"14\" x2=\"%.1f\" y2=\"14\" stroke=\"%s\""
          + " stroke-width=\"3\"%s/>", lx, lx + 18, s.color(), s.dashed() ? " stroke-dasharray=\"5 3\"" : ""));
      b.append(String.format(Locale.ROOT, "<text x=\"%.1f\" y=\"18\">%s</text>", lx + 22, esc(s.name())));
      lx += 34 + s.name().length() * 6.3;
    }
    b.append("\n</svg>\n");
    return b.toString();
  }

  private static double niceStep(double range, int ticks) {
    double raw = range / ticks;
    double mag = Math.pow(10, Math.floor(Math.log10(raw)));
    double norm = raw / mag;
    double nice = norm <= 1 ? 1 : norm <= 2 ? 2 : norm <= 5 ? 5 : 10;
    return nice * mag;
  }

  private static String tick(double v) {
    if (v == Math.rint(v) && Math.abs(v) < 1e15) {
      long l = (long) v;
      if (l >= 1_000_000 && l % 1_000_000 == 0) {
        return (l / 1_000_000) + "M";
      }
      if (l >= 1_000 && l % 1_000 == 0) {
        return (l / 1_000) + "k";
      }
      return Long.toString(l);
    }
    return String.format(Locale.ROOT, "%s", trim(v));
  }

  private static String trim(double v) {
    String s = String.format(Locale.ROOT, "%.3f", v);
    s = s.replaceAll("0+$", "");
    return s.endsWith(".") ? s.substring(0, s.length() - 1) : s;
  }

  private static double sum(double[] values) {
    double s = 0;
    for (double v : values) {
      if (!Double.isNaN(v)) {
        s += v;
      }
    }
    return s;
  }

  private static double max(double[] values) {
    double m = Double.NaN;
    for (double v : values) {
      if (!Double.isNaN(v)) {
        m = Double.isNaN(m) ? v : Math.max(m, v);
      }
    }
    return m;
  }

  private static String cell(double v) {
    return Double.isNaN(v) ? "" : fmt(v);
  }

  private static String str(Long v) {
    return v == null ? "" : v.toString();
  }

  static String esc(String s) {
    if (s == null) {
      return "";
    }
    StringBuilder b = new StringBuilder(s.length());
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      switch (c) {
        case '<' -> b.append("&lt;");
        case '>' -> b.append("&gt;");
        case '&' -> b.append("&amp;");
        case '"' -> b.append("&quot;");
        case '\'' -> b.append("&#39;");
        default -> b.append(c);
      }
    }
    return b.toString();
  }
}
