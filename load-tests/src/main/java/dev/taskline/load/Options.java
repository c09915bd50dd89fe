package dev.taskline.load;

import io.vertx.core.json.DecodeException;
import io.vertx.core.json.JsonObject;
import java.net.InetAddress;
import java.net.URI;
import java.net.URISyntaxException;
import java.net.UnknownHostException;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/** Command-line options, with the defaults of each scenario filled in. */
final class Options {

  static final List<String> SCENARIOS = List.of("under", "overload", "burst", "recovery", "steps", "bench",
      "idle-latency");

  /** Hard limits, whatever the options say: every run stops by itself. */
  static final double MAX_RATE = 50_000;
  static final int MAX_DURATION_S = 3_600;
  static final long MAX_REQUESTS_LIMIT = 5_000_000;

  String url = "http://127.0.0.1:8080";
  String scenario;
  Double rate;
  Double capacityRate;
  int duration;
  String queue;
  /** Sent as Taskline-Tenant on every submission, or null for none. */
  String tenant;
  /** The API key to send as a Bearer token, or null (a node with auth off). */
  String key = System.getenv("TASKLINE_API_KEY");
  int batch;
  String payload;
  JsonObject payloadJson;
  int concurrency;
  int drainTimeoutS = 120;
  String report;
  long seed = System.nanoTime();
  boolean seedGiven;
  String arrivals = "uniform";
  int maxInFlight = 2_000;
  int connections = 256;
  long maxRequests = 2_000_000;
  int count = 2_000;
  int warmup = 500;
  int requestTimeoutMs = 30_000;
  int calibrateS = 5;
  boolean followDuringRun = true;
  int stepSeconds = 10;

  // derived
  String host;
  int port;
  String basePath;
  Path reportPath;

  static String usage() {
    return """
        Taskline load tests: an open-model load generator for a Taskline server on this machine.

        usage: mvn -q -f load-tests/pom.xml compile exec:java -Dexec.args="--scenario NAME [options]"

        scenarios:
          under         constant rate below capacity (default 0.5 x the consumption rate) for 30 s
          overload      twice the consumption rate for 60 s: the backlog plateaus at capacity, the rest gets 429
          burst         base rate (0.5 x consumption) for 10 s, 10 x that rate for 5 s, base again for 15 s
          recovery      overload (2 x) for 30 s, then under capacity (0.5 x) for 30 s: the backlog drains
          steps         the rate steps up every 10 s: 0.25, 0.5, ... 1.5 x the consumption rate
          bench         closed loop: --concurrency submitters send batches of 100 no-op tasks as fast as
                        the server accepts them for 60 s; sustained end-to-end throughput
          idle-latency  single no-op tasks one at a time on an idle server: submit-to-start latency
                        (startedAt - createdAt, both server timestamps) over --count tasks

        options:
          --url URL             server base URL; must resolve to a loopback address (default http://127.0.0.1:8080)
          --scenario NAME       one of the scenarios above
          --rate R              requests/s of the main phase (under, overload: the rate; burst: the base rate,
                                the burst is 10 x R; recovery: R for the overload half, R/4 after; steps: the
                                last step, earlier steps are R*k/n). Default: derived from the consumption rate
          --capacity-rate C     the consumption rate in tasks/s; skips the 5 s calibration
          --duration S          seconds of the main run (scenario default: 30 or 60)
          --queue Q             queue to submit to (default: matching for the open scenarios, default for bench)
          --batch N             tasks per request; 1 posts /api/tasks, more post /api/batches (default 1; bench 100)
          --tenant NAME         submit as this tenant (the Taskline-Tenant header), e.g. to fill a queue's
                                tenantLimit while another run submits as another tenant
          (TASKLINE_API_KEY)    an API key sent on every request as Authorization: Bearer, for a node with
                                auth.keys; an environment variable so that it stays out of the process list.
                                An admin key reads /metrics too.
          --payload JSON        payload of the sleep tasks (default {"ms":20}; bench and idle-latency {"ms":0});
                                bare keys are fine: {ms:50,steps:5}
          --concurrency N       closed-loop submitters for bench (default 8) and calibration (default 4)
          --drain-timeout S     how long to wait after the run for every accepted task to end (default 120)
          --report PATH         the HTML report (default load-tests/reports/<scenario>-<timestamp>.html)
          --seed N              seed of the random arrivals (with --arrivals poisson)
          --arrivals KIND       uniform (t0 + i/rate, the default) or poisson (exponential gaps)
          --max-in-flight N     open requests at most; a request due while N are open is counted as
                                dropped by the client, the schedule does not slow down (default 2000)
          --connections N       HTTP/1.1 connections at most (default 256)
          --max-requests N      stop the schedule after N requests (default 2000000)
          --count N             idle-latency: tasks to measure (default 2000)
          --warmup N            idle-latency: tasks sent the same way first and not measured, so
                                that a fresh server has compiled its hot paths (default 500)
          --request-timeout MS  per request (default 30000)
          --calibrate S         seconds of calibration (default 5)
          --follow-during-run B poll accepted tasks while the load runs too (default true; bench false)
          --step-seconds S      steps: seconds per step (default 10)
          --help                this text

        exit code: 0 when no accepted task was lost and no request got a 5xx (nor a connection error or
        timeout), 1 otherwise, 2 on bad options or a non-loopback URL.
        """;
  }

  static Options parse(String[] args) {
    Options o = new Options();
    Map<String, String> given = new LinkedHashMap<>();
    for (int i = 0; i < args.length; i++) {
      String arg = args[i];
      if (arg.equals("--help") || arg.equals("-h")) {
        throw new UsageException(null);
      }
      if (!arg.startsWith("--")) {
        throw new UsageException("unexpected argument '" + arg + "'");
      }
      String key;
      String value;
      int eq = arg.indexOf('=');
      if (eq > 0) {
        key = arg.substring(2, eq);
        value = arg.substring(eq + 1);
      } else {
        key = arg.substring(2);
        if (i + 1 >= args.length) {
          throw new UsageException("--" + key + " needs a value");
        }
        value = args[++i];
      }
      if (given.put(key, value) != null) {
        throw new UsageException("--" + key + " given twice");
      }
    }
    for (Map.Entry<String, String> e : given.entrySet()) {
      String v = e.getValue();
      switch (e.getKey()) {
        case "url" -> o.url = v;
        case "scenario" -> o.scenario = v.toLowerCase(Locale.ROOT);
        case "rate" -> o.rate = positive("rate", v, MAX_RATE);
        case "capacity-rate" -> o.capacityRate = positive("capacity-rate", v, MAX_RATE);
        case "duration" -> o.duration = (int) integer("duration", v, 1, MAX_DURATION_S);
        case "queue" -> o.queue = v;
        case "tenant" -> {
          if (!v.matches("[A-Za-z0-9._:@-]{1,128}")) {
            throw new UsageException("--tenant must be 1 to 128 letters, digits, '.', '_', ':', '@' or '-'");
          }
          o.tenant = v;
        }
        case "batch" -> o.batch = (int) integer("batch", v, 1, 10_000);
        case "payload" -> o.payload = v;
        case "concurrency" -> o.concurrency = (int) integer("concurrency", v, 1, 1_000);
        case "drain-timeout" -> o.drainTimeoutS = (int) integer("drain-timeout", v, 0, MAX_DURATION_S);
        case "report" -> o.report = v;
        case "seed" -> {
          o.seed = integer("seed", v, Long.MIN_VALUE, Long.MAX_VALUE);
          o.seedGiven = true;
        }
        case "arrivals" -> {
          if (!v.equals("uniform") && !v.equals("poisson")) {
            throw new UsageException("--arrivals must be uniform or poisson");
          }
          o.arrivals = v;
        }
        case "max-in-flight" -> o.maxInFlight = (int) integer("max-in-flight", v, 1, 100_000);
        case "connections" -> o.connections = (int) integer("connections", v, 1, 10_000);
        case "max-requests" -> o.maxRequests = integer("max-requests", v, 1, MAX_REQUESTS_LIMIT);
        case "count" -> o.count = (int) integer("count", v, 1, 1_000_000);
        case "warmup" -> o.warmup = (int) integer("warmup", v, 0, 100_000);
        case "request-timeout" -> o.requestTimeoutMs = (int) integer("request-timeout", v, 1, 600_000);
        case "calibrate" -> o.calibrateS = (int) integer("calibrate", v, 2, 60);
        case "follow-during-run" -> o.followDuringRun = bool("follow-during-run", v);
        case "step-seconds" -> o.stepSeconds = (int) integer("step-seconds", v, 1, 600);
        default -> throw new UsageException("unknown option --" + e.getKey());
      }
    }
    if (o.scenario == null) {
      throw new UsageException("--scenario is required");
    }
    if (!SCENARIOS.contains(o.scenario)) {
      throw new UsageException("unknown scenario '" + o.scenario + "'; one of " + String.join(", ", SCENARIOS));
    }
    o.applyDefaults(given);
    o.resolveUrl();
    return o;
  }

  private void applyDefaults(Map<String, String> given) {
    boolean bench = scenario.equals("bench");
    boolean idle = scenario.equals("idle-latency");
    if (duration == 0) {
      duration = switch (scenario) {
        case "under", "burst" -> 30;
        case "idle-latency" -> 120;
        default -> 60;
      };
    }
    if (queue == null) {
      queue = bench || idle ? "default" : "matching";
    }
    if (batch == 0) {
      batch = bench ? 100 : 1;
    }
    if (idle && batch != 1) {
      throw new UsageException("idle-latency submits single tasks; leave --batch out");
    }
    if (payload == null) {
      payload = bench || idle ? "{\"ms\":0}" : "{\"ms\":20}";
    }
    payloadJson = parsePayload(payload);
    if (concurrency == 0) {
      concurrency = bench ? 8 : 4;
    }
    if (bench && !given.containsKey("follow-during-run")) {
      followDuringRun = false;
    }
    if (report == null) {
      String base = System.getProperty("taskline.load.basedir");
      Path dir = base != null ? Paths.get(base, "reports") : Paths.get("load-tests", "reports");
      String stamp = LocalDateTime.now().format(DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss"));
      reportPath = dir.resolve(scenario + "-" + stamp + ".html");
    } else {
      reportPath = Paths.get(report);
    }
  }

  /**
   * The payload as JSON. Bare keys are accepted too ({@code {ms:50,steps:5}}), because exec:java
   * strips double quotes from -Dexec.args unless they sit inside single quotes.
   */
  static JsonObject parsePayload(String text) {
    try {
      return new JsonObject(text);
    } catch (DecodeException | ClassCastException e) {
      String quoted = text.replaceAll("([{,]\\s*)([A-Za-z_][A-Za-z0-9_]*)\\s*:", "$1\"$2\":");
      try {
        return new JsonObject(quoted);
      } catch (DecodeException | ClassCastException e2) {
        throw new UsageException("--payload must be a JSON object, e.g. {\"ms\":50} (or {ms:50}); got " + text);
      }
    }
  }

  /** Refuses any URL whose host does not resolve to loopback addresses only. */
  private void resolveUrl() {
    URI uri;
    try {
      uri = new URI(url);
    } catch (URISyntaxException e) {
      throw new UsageException("--url is not a URL: " + url);
    }
    if (!"http".equalsIgnoreCase(uri.getScheme())) {
      throw new UsageException("--url must be http://... (got " + url + ")");
    }
    if (uri.getHost() == null) {
      throw new UsageException("--url has no host: " + url);
    }
    if (uri.getUserInfo() != null || uri.getQuery() != null || uri.getFragment() != null) {
      throw new UsageException("--url must be a plain base URL such as http://127.0.0.1:8080");
    }
    String h = uri.getHost();
    if (h.startsWith("[") && h.endsWith("]")) {
      h = h.substring(1, h.length() - 1);
    }
    InetAddress[] addresses;
    try {
      addresses = InetAddress.getAllByName(h);
    } catch (UnknownHostException e) {
      throw new UsageException("cannot resolve the host of --url: " + h);
    }
    for (InetAddress address : addresses) {
      if (!address.isLoopbackAddress()) {
        throw new RefusedException("refusing to send load to " + url + ": " + h + " resolves to "
            + address.getHostAddress() + ", which is not a loopback address. This tool only targets a server on"
            + " this machine (127.0.0.0/8 or ::1).");
      }
    }
    // Connect to the resolved loopback address itself, so a later lookup cannot point elsewhere.
    host = addresses[0].getHostAddress();
    port = uri.getPort() == -1 ? 80 : uri.getPort();
    String path = uri.getRawPath() == null ? "" : uri.getRawPath();
    basePath = path.endsWith("/") ? path.substring(0, path.length() - 1) : path;
  }

  /** The loopback base URL requests go to. */
  String target() {
    String h = host.contains(":") ? "[" + host + "]" : host;
    return "http://" + h + ":" + port + basePath;
  }

  private static double positive(String name, String v, double max) {
    double d;
    try {
      d = Double.parseDouble(v);
    } catch (NumberFormatException e) {
      throw new UsageException("--" + name + " must be a number");
    }
    if (!(d > 0) || d > max || Double.isNaN(d)) {
      throw new UsageException("--" + name + " must be above 0 and at most " + (long) max);
    }
    return d;
  }

  private static long integer(String name, String v, long min, long max) {
    long n;
    try {
      n = Long.parseLong(v);
    } catch (NumberFormatException e) {
      throw new UsageException("--" + name + " must be an integer");
    }
    if (n < min || n > max) {
      throw new UsageException("--" + name + " must be from " + min + " to " + max);
    }
    return n;
  }

  private static boolean bool(String name, String v) {
    return switch (v.toLowerCase(Locale.ROOT)) {
      case "true", "yes", "on", "1" -> true;
      case "false", "no", "off", "0" -> false;
      default -> throw new UsageException("--" + name + " must be true or false");
    };
  }

  /** Bad options: print the message and the usage, exit 2. */
  static final class UsageException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    UsageException(String message) {
      super(message);
    }
  }

  /** A target that is not loopback: exit 2 without sending anything. */
  static final class RefusedException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    RefusedException(String message) {
      super(message);
    }
  }
}
