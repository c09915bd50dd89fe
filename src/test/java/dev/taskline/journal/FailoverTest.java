package dev.taskline.journal;

import static dev.taskline.testing.TestNode.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.taskline.testing.PgPair;
import dev.taskline.testing.SubmitLoad;
import dev.taskline.testing.TestNode;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * A primary with a synchronous standby, two nodes on a URL that names both ({@code
 * target_session_attrs=read-write}), tasks submitted to both without pause; the primary is killed as
 * its machine would die and the standby promoted. Every task answered 202 is there afterwards and
 * succeeds exactly once (attempt 1: never run a second time), every other answer is a 503 with
 * Retry-After, never a 500, the nodes are not ready while no primary answers, and writes are
 * accepted again within 10 s of the promotion, without a restart.
 */
class FailoverTest {

    private static final String CONFIG = "{\"queues\": {\"default\": {\"capacity\": 100000, \"slots\": 8}}}";
    private static final int CLIENTS = 4;
    private static final Duration WRITES_BACK_WITHIN = Duration.ofSeconds(10);

    @Test
    void a_killed_primary_loses_nothing_acknowledged_and_writes_come_back_on_the_promoted_standby() throws Exception {
        Path bin = PgPair.binaries();
        assumeTrue(bin != null, "no PostgreSQL 15 binaries on this machine");
        try (PgPair pair = PgPair.start(bin);
                TestNode a = TestNode.start(pair.url(), CONFIG);
                TestNode b = TestNode.start(pair.url(), CONFIG)) {
            SubmitLoad load = new SubmitLoad(List.of(a, b), CLIENTS);
            load.start();
            load.accepted(300);

            pair.killPrimary();
            load.untilAnswered(503);
            assertEquals(503, await(a.http.get("/health/ready").send()).statusCode(), "ready with no primary");
            long promoted = System.nanoTime();
            pair.promote();

            long back = load.firstAcceptedAfter(promoted);
            assertTrue(
                    back - promoted < WRITES_BACK_WITHIN.toNanos(),
                    "writes came back " + TimeUnit.NANOSECONDS.toMillis(back - promoted) + " ms after the promotion");
            load.accepted(load.acceptedCount() + 300);
            load.stop();

            assertTrue(Set.of(202, 503).containsAll(load.statuses.keySet()), "answers: " + load.statuses);
            assertEquals(List.of(), load.withoutRetryAfter, "a 503 without Retry-After");
            // Ready again at once: the node's pools share one choice of server with the writes that came back.
            assertEquals(200, await(a.http.get("/health/ready").send()).statusCode(), "node a ready again");
            assertEquals(200, await(b.http.get("/health/ready").send()).statusCode(), "node b ready again");

            List<UUID> accepted = new ArrayList<>(load.accepted);
            SubmitLoad.everySucceededOnce(pair.standbyUrl(), accepted);
            // The figures the load test reports at length, for the log.
            System.out.println("failover: writes back " + TimeUnit.NANOSECONDS.toMillis(back - promoted)
                    + " ms after the promotion; answers " + new TreeMap<>(load.statuses) + "; "
                    + accepted.size() + " accepted, all succeeded once");
        }
    }
}
