package dev.taskline;

import dev.taskline.auth.NewKey;
import dev.taskline.config.ConfigException;
import dev.taskline.config.ConfigLoader;
import dev.taskline.config.TasklineConfig;
import dev.taskline.journal.DataDirectoryInUseException;
import dev.taskline.metrics.TasklineMetrics;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.micrometer.MetricsDomain;
import io.vertx.micrometer.MicrometerMetricsFactory;
import io.vertx.micrometer.MicrometerMetricsOptions;
import java.time.Clock;
import java.util.concurrent.CountDownLatch;
import java.util.logging.Level;
import java.util.logging.Logger;

/** Starts a node from {@code conf/} and the environment; on SIGTERM drains it, then stops it. */
public final class Main {

    static {
        // Before any logger exists, or the JVM's own manager is already in place.
        System.setProperty("java.util.logging.manager", LogManagerForShutdown.class.getName());
        System.setProperty("java.util.logging.SimpleFormatter.format", "%1$tFT%1$tT.%1$tL %4$s %3$s: %5$s%6$s%n");
    }

    private static final Logger LOG = Logger.getLogger(Main.class.getName());
    /**
     * The embedded PostgreSQL's library logs initdb's and the server's own output line by line at
     * INFO: dozens of lines at a first start. Its warnings and errors still show. Held here because
     * java.util.logging keeps loggers weakly, and a collected one forgets its level.
     */
    private static final Logger EMBEDDED_PG_LOG = quiet("io.zonky.test.db.postgres");

    private static Logger quiet(String name) {
        Logger logger = Logger.getLogger(name);
        logger.setLevel(Level.WARNING);
        return logger;
    }

    private Main() {}

    public static void main(String[] args) {
        if (args.length > 0 && args[0].equals("new-key")) {
            try {
                NewKey.run(java.util.List.of(args).subList(1, args.length), System.out);
                return;
            } catch (ConfigException e) {
                System.err.println("taskline: " + e.getMessage());
                System.exit(2);
            }
        }
        java.util.Map<String, String> env = new java.util.HashMap<>(System.getenv());
        if (args.length == 1 && args[0].equals("--take-over-config")) {
            env.put(ConfigLoader.ENV_TAKE_OVER_CONFIG, "true");
        } else if (args.length > 0) {
            System.err.println(
                    "taskline: unknown command " + args[0]
                            + " (run with no argument to serve, --take-over-config to serve with new queue definitions, or new-key)");
            System.exit(2);
        }
        TasklineConfig config;
        try {
            config = ConfigLoader.load(env);
        } catch (ConfigException e) {
            System.err.println("taskline: bad configuration: " + e.getMessage());
            System.exit(2);
            return;
        }
        Clock clock = Clock.systemUTC();
        TasklineMetrics metrics = new TasklineMetrics(clock);
        // Vert.x reports its HTTP server, pool and event-loop metrics to the same registry. Not its
        // HTTP client's: they register meters on every call, a good part of a push call's cost, and
        // a push queue's calls are already counted and timed as its tasks.
        Vertx vertx = Vertx.builder()
                .with(new VertxOptions()
                        .setMetricsOptions(new MicrometerMetricsOptions()
                                .setEnabled(true)
                                .setJvmMetricsEnabled(true)
                                .addDisabledMetricsCategory(MetricsDomain.HTTP_CLIENT)))
                .withMetrics(new MicrometerMetricsFactory(metrics.registry()))
                .build();
        Taskline.start(vertx, config, clock, metrics, null)
                .onSuccess(node ->
                        Runtime.getRuntime().addShutdownHook(new Thread(() -> stop(vertx, node), "taskline-stop")))
                .onFailure(e -> {
                    if (e instanceof DataDirectoryInUseException) {
                        // An answer to the operator, not a fault: no stack trace.
                        LOG.severe("taskline failed to start: " + e.getMessage());
                    } else {
                        LOG.log(Level.SEVERE, "taskline failed to start", e);
                    }
                    vertx.close().onComplete(v -> System.exit(1));
                });
    }

    private static void stop(Vertx vertx, Taskline node) {
        CountDownLatch stopped = new CountDownLatch(1);
        node.shutdown().eventually(node::close).eventually(vertx::close).onComplete(v -> {
            LOG.info("stopped");
            stopped.countDown();
        });
        try {
            // The JVM exits when this hook returns, so the hook waits for the drain to end. It runs on
            // the JVM's own shutdown-hook thread ("taskline-stop"), never on a Vert.x event loop.
            stopped.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            LogManagerForShutdown.shutdownDone();
        }
    }
}
