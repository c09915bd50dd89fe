package dev.taskline.metrics;

import static dev.taskline.testing.TestNode.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.taskline.config.QueueConfig;
import dev.taskline.queue.TaskQueue;
import io.micrometer.core.instrument.Meter;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.http.HttpServer;
import io.vertx.core.net.NetClient;
import io.vertx.micrometer.MicrometerMetricsFactory;
import io.vertx.micrometer.MicrometerMetricsOptions;
import java.io.InputStream;
import java.net.URI;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.junit.jupiter.api.Test;

class TasklineMetricsTest {

    private static TasklineMetrics withOneOfEach() {
        TasklineMetrics metrics = new TasklineMetrics(Clock.systemUTC());
        metrics.register(new TaskQueue(new QueueConfig("q", 2, 10, 30_000, 10_000)));
        metrics.waitingInserts(() -> 0);
        metrics.journalWrite("insert", 1_000);
        return metrics;
    }

    @Test
    void every_taskline_meter_has_a_description() {
        TasklineMetrics metrics = withOneOfEach();
        Set<String> undescribed = new TreeSet<>();
        int seen = 0;
        for (Meter meter : metrics.registry().getMeters()) {
            Meter.Id id = meter.getId();
            if (id.getName().startsWith("taskline")) {
                seen++;
                if (id.getDescription() == null || id.getDescription().isBlank()) {
                    undescribed.add(id.getName());
                }
            }
        }
        assertTrue(seen > 20, "the queue's meters are registered: " + seen);
        assertEquals(Set.of(), undescribed);
    }

    /** What promtool checks: each family in the scrape has its HELP line. */
    @Test
    void every_taskline_family_in_the_scrape_has_help() {
        String scrape = withOneOfEach().scrape();
        Set<String> typed = new TreeSet<>();
        Set<String> helped = new TreeSet<>();
        for (String line : scrape.split("\n")) {
            String[] words = line.split(" ", 4);
            if (words.length >= 4 && words[2].startsWith("taskline_")) {
                if (words[1].equals("TYPE")) {
                    typed.add(words[2]);
                } else if (words[1].equals("HELP") && !words[3].isBlank()) {
                    helped.add(words[2]);
                }
            }
        }
        assertTrue(
                typed.contains("taskline_queue_capacity") && typed.contains("taskline_queue_slots"), typed::toString);
        assertEquals(typed, helped);
    }

    /**
     * Vert.x as Main sets it up, doing what a node does: two consumers of one address (each queue's
     * worker listens for cancels), several connections and requests. Micrometer logs a gauge
     * registered again, as a warning only the first time in the JVM, so FINE records count too; a
     * gauge of ours registered twice is still told.
     */
    @Test
    void vertx_gauges_registered_again_log_nothing_and_stay_while_ours_are_still_reported() throws Exception {
        TasklineMetrics metrics = new TasklineMetrics(Clock.systemUTC());
        Logger micrometer = Logger.getLogger("io.micrometer.core.instrument.MeterRegistry");
        Level level = micrometer.getLevel();
        List<String> again = new ArrayList<>();
        Handler handler = new Handler() {
            @Override
            public void publish(LogRecord record) {
                String message = record.getMessage();
                if (message != null && message.contains("already registered")) {
                    synchronized (again) {
                        again.add(message);
                    }
                }
            }

            @Override
            public void flush() {}

            @Override
            public void close() {}
        };
        handler.setLevel(Level.ALL);
        micrometer.setLevel(Level.ALL);
        micrometer.addHandler(handler);
        Vertx vertx = Vertx.builder()
                .with(new VertxOptions()
                        .setMetricsOptions(
                                new MicrometerMetricsOptions().setEnabled(true).setJvmMetricsEnabled(true)))
                .withMetrics(new MicrometerMetricsFactory(metrics.registry()))
                .build();
        try {
            Promise<Void> first = Promise.promise();
            Promise<Void> second = Promise.promise();
            await(vertx.eventBus()
                    .consumer("taskline.test", m -> first.tryComplete())
                    .completion());
            await(vertx.eventBus()
                    .consumer("taskline.test", m -> second.tryComplete())
                    .completion());
            vertx.eventBus().publish("taskline.test", "hello");
            await(Future.all(first.future(), second.future()));
            HttpServer server = await(vertx.createHttpServer()
                    .requestHandler(request -> request.response().end("ok"))
                    .listen(0, "127.0.0.1"));
            for (int i = 0; i < 3; i++) {
                var connection = URI.create("http://127.0.0.1:" + server.actualPort() + "/")
                        .toURL()
                        .openConnection();
                connection.setRequestProperty("Connection", "close");
                try (InputStream in = connection.getInputStream()) {
                    in.readAllBytes();
                }
            }
            NetClient client = vertx.createNetClient();
            for (int i = 0; i < 2; i++) {
                await(await(client.connect(server.actualPort(), "127.0.0.1")).close());
            }
            synchronized (again) {
                assertEquals(List.of(), again);
            }
            Set<String> names = new TreeSet<>();
            metrics.registry()
                    .getMeters()
                    .forEach(meter -> names.add(meter.getId().getName()));
            assertTrue(names.contains("vertx.http.server.requests"), "Vert.x's own HTTP counters stay: " + names);
            assertTrue(names.contains("vertx.eventbus.published"), "Vert.x's event-bus counters stay: " + names);
            assertTrue(names.contains("vertx.eventbus.handlers"), "and its gauges: " + names);
            assertTrue(names.contains("vertx.http.server.active.connections"), names::toString);

            io.micrometer.core.instrument.Gauge.builder("taskline.test.twice", () -> 1)
                    .register(metrics.registry());
            io.micrometer.core.instrument.Gauge.builder("taskline.test.twice", () -> 2)
                    .register(metrics.registry());
            synchronized (again) {
                assertEquals(1, again.size(), "our own gauge registered twice is reported: " + again);
                assertTrue(again.get(0).contains("taskline.test.twice"), again::toString);
            }
        } finally {
            micrometer.removeHandler(handler);
            micrometer.setLevel(level);
            await(vertx.close());
        }
    }
}
