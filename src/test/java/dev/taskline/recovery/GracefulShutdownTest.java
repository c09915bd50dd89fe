package dev.taskline.recovery;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.taskline.testing.ChildNode;
import dev.taskline.testing.ChildNodeTest;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.io.UncheckedIOException;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Black-box: SIGTERM under load loses nothing, and the restarted server finishes the released tasks
 * without waiting for leases to lapse.
 *
 * <p>The node runs as a child JVM on its embedded PostgreSQL. Its leases are ten minutes long, so a
 * task left running by the first node could only be taken over after ten minutes: the finish
 * deadline (90 s) makes the test fail unless the drain really handed the running tasks back to the
 * journal (pending, lease version bumped, a {@code released} event). While it drains, the node must
 * refuse new work with 503 and report itself not ready.
 */
class GracefulShutdownTest extends ChildNodeTest {

    private static final long GRACE_MS = 3_000;
    private static final long LEASE_MS = 600_000;
    // No claims ahead, so that the tasks running at SIGTERM are exactly the two in the slots; the
    // hand-back of tasks claimed ahead is ClaimAheadTest's.
    private static final String CONFIG = """
      {"queues":{"default":{"slots":2,"capacity":1000,"leaseMs":%d,"heartbeatMs":200000,"claimAhead":0}},
       "recovery":{"intervalMs":200},
       "shutdown":{"graceMs":%d}}
      """.formatted(LEASE_MS, GRACE_MS);
    private static final int SHORT_MS = 100;
    /** Longer than the grace period with room to spare, so a task running at SIGTERM cannot end in it. */
    private static final int LONG_MS = 6_000;

    private static final int LONG_STEPS = 6;
    private static final int SHORT_TASKS = 2;
    private static final int LONG_TASKS = 4;
    private static final int WAITING_TASKS = 3;
    private static final Duration FINISH_WAIT = Duration.ofSeconds(90);
    private static final Duration EXIT_WAIT = Duration.ofMillis(GRACE_MS).plusSeconds(30);
    /** Main's last line once the shutdown hook is done. */
    private static final String STOPPED = "dev.taskline.Main: stopped";

    @Test
    @Timeout(value = 5, unit = TimeUnit.MINUTES)
    void sigterm_under_load_loses_nothing_and_restart_finishes_released_tasks_without_lease_lapse() throws Exception {
        Map<String, String> env = childEnv(CONFIG);
        Path dataDir = dataDir();
        long t0 = System.nanoTime();

        // --- first node: two short tasks, four long ones, a few waiting behind them ---
        ChildNode first = startChild("node1", env);
        System.err.printf("node1 listening on %d after %d ms%n", first.port(), elapsedMs(t0));

        List<String> shortIds = new ArrayList<>();
        List<String> longIds = new ArrayList<>();
        List<String> waitingIds = new ArrayList<>();
        for (int i = 0; i < SHORT_TASKS; i++) {
            shortIds.add(submit(first, sleep(SHORT_MS, 1)));
        }
        for (int i = 0; i < LONG_TASKS; i++) {
            longIds.add(submit(first, sleep(LONG_MS, LONG_STEPS)));
        }
        for (int i = 0; i < WAITING_TASKS; i++) {
            waitingIds.add(submit(first, sleep(SHORT_MS, 1)));
        }
        List<String> ids = new ArrayList<>();
        ids.addAll(shortIds);
        ids.addAll(longIds);
        ids.addAll(waitingIds);
        assertEquals(ids.size(), new LinkedHashSet<>(ids).size(), () -> "ids not distinct: " + ids);

        // Both slots busy with long tasks, each early in its run (so it cannot end within the grace).
        Map<String, JsonObject> rows = new HashMap<>();
        Set<String> longSet = Set.copyOf(longIds);
        pollStates(
                first,
                ids,
                Duration.ofSeconds(60),
                rows,
                states -> {
                    long longRunningEarly = rows.values().stream()
                            .filter(r -> longSet.contains(r.getString("id")) && "running".equals(r.getString("state")))
                            .filter(r -> r.getJsonObject("progress", new JsonObject())
                                            .getInteger("percent", 0)
                                    < 50)
                            .count();
                    // The short ones ended, not just started: a handler that returned is running in the journal
                    // until its end commits, and the reading below counts the journal's running tasks.
                    return longRunningEarly == 2
                            && shortIds.stream().allMatch(id -> "succeeded".equals(states.get(id)));
                },
                "two long tasks running early in their run, the short ones done");
        JsonObject queue = defaultQueue(first);
        assertEquals(2, queue.getInteger("running"), () -> "GET /api/queues: " + queue.encode());
        Set<String> runningAtTerm = rows.values().stream()
                .filter(r -> "running".equals(r.getString("state")))
                .map(r -> r.getString("id"))
                .collect(Collectors.toCollection(LinkedHashSet::new));
        assertEquals(2, runningAtTerm.size(), () -> "running before SIGTERM: " + runningAtTerm);
        assertTrue(longSet.containsAll(runningAtTerm), () -> "running before SIGTERM: " + runningAtTerm);

        // --- SIGTERM: the node drains; meanwhile it refuses work and is not ready ---
        long termNanos = System.nanoTime();
        sigterm(first);
        System.err.printf("node1 sent SIGTERM after %d ms; running then: %s%n", elapsedMs(t0), runningAtTerm);
        DrainObservation seen = observeDrain(first, ids, termNanos);
        System.err.printf("during the drain: %s%n", seen);

        int exit1 = awaitExit(first, termNanos, EXIT_WAIT);
        long exitMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - termNanos);
        System.err.printf("node1 exited with %d, %d ms after SIGTERM%n", exit1, exitMs);
        String log1 = first.log();
        assertTrue(
                log1.contains(first.nodeId() + " draining: " + GRACE_MS + " ms"),
                "node1 should have logged that it drains; its log:\n" + log1);
        assertTrue(log1.contains(first.nodeId() + " drained"), "node1 should have logged 'drained'; its log:\n" + log1);
        assertTrue(
                log1.indexOf(first.nodeId() + " drained") > log1.indexOf(first.nodeId() + " draining:"),
                "'drained' before 'draining' in node1's log:\n" + log1);
        assertTrue(log1.contains(STOPPED), "node1 should have logged 'stopped'; its log:\n" + log1);
        // The drain needs the journal until its releases are written; nothing may cut it off before.
        String drainLog = log1.substring(0, log1.indexOf(first.nodeId() + " drained"));
        assertTrue(
                seen.otherRefusals().isEmpty()
                        && !drainLog.contains("could not be run or recorded")
                        && !drainLog.contains("journal unavailable")
                        && !drainLog.contains("recovery pass failed")
                        && !drainLog.contains("received fast shutdown request"),
                () ->
                        "node1 lost its journal while it drained (its embedded PostgreSQL stopped before the releases were "
                                + "written?): other 503s " + seen.otherRefusals() + "; its log:\n" + log1);
        assertTrue(
                exitMs >= GRACE_MS,
                () -> "node1 exited " + exitMs + " ms after SIGTERM, before its grace of " + GRACE_MS
                        + " ms ran out, although long tasks were running; its log:\n" + log1);
        // A graceful stop also stops the embedded PostgreSQL.
        List<ProcessHandle> afterFirst = awaitNoProcessesOnDataDir(Duration.ofSeconds(10));
        assertTrue(
                afterFirst.isEmpty(),
                () -> "processes still running on the data dir after node1 stopped: "
                        + afterFirst.stream()
                                .map(GracefulShutdownTest::describe)
                                .toList() + "\n--- node1 log ---\n" + log1);
        if (!seen.refusedSubmission && !seen.notReady) {
            System.err.println("WARNING: node1 exited before the 503s could be observed");
        }

        // --- second node on the same data: it finishes everything, long before a lease could lapse ---
        ChildNode second = startChild("node2", env);
        long secondUp = System.nanoTime();
        System.err.printf("node2 listening on %d after %d ms%n", second.port(), elapsedMs(t0));
        assertFalse(
                second.log().contains("from an earlier run still holds"),
                "node1 stopped gracefully, yet node2 found its PostgreSQL still running; node2 log:\n" + second.log());

        Map<String, String> end = pollStates(
                second,
                ids,
                FINISH_WAIT,
                new HashMap<>(),
                s -> s.values().stream().allMatch(TERMINAL::contains),
                "all " + ids.size() + " tasks terminal");
        long finishMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - secondUp);
        System.err.printf(
                "all terminal %d ms after node2 came up (%d ms in all): %s%n", finishMs, elapsedMs(t0), histogram(end));
        assertTrue(finishMs < LEASE_MS / 2, "took " + finishMs + " ms: as long as waiting for a lease");

        // --- task by task, from the journal's history ---
        String node1 = first.nodeId() + "/";
        String node2 = second.nodeId() + "/";
        List<String> problems = new ArrayList<>();
        Map<String, List<JsonObject>> releases = new LinkedHashMap<>();
        for (String id : ids) {
            JsonObject task = second.getJson("/api/tasks/" + id);
            List<String> taskProblems = checkTask(task, node1, node2, runningAtTerm.contains(id), releases);
            if (!taskProblems.isEmpty()) {
                problems.add(id + ": " + String.join("; ", taskProblems) + "\n    " + task.encode());
            }
        }
        System.err.printf("released at shutdown: %s%n", releases.keySet());
        if (!problems.isEmpty()) {
            fail(problems.size() + " task(s) break the invariant:\n" + String.join("\n", problems)
                    + "\n--- node1 log ---\n" + log1 + "\n--- node2 log ---\n" + second.log());
        }
        assertEquals(runningAtTerm, releases.keySet(), "exactly the tasks running at SIGTERM are released");

        // --- stop the second node too; nothing may be left on the data dir ---
        long term2 = System.nanoTime();
        sigterm(second);
        int exit2 = awaitExit(second, term2, EXIT_WAIT);
        System.err.printf("node2 exited with %d after SIGTERM, at %d ms%n", exit2, elapsedMs(t0));
        assertTrue(
                second.log().contains(second.nodeId() + " drained"),
                "node2 should have logged 'drained'; its log:\n" + second.log());
        List<ProcessHandle> orphans = awaitNoProcessesOnDataDir(Duration.ofSeconds(10));
        assertTrue(
                orphans.isEmpty(),
                () -> "processes still running on " + dataDir + " after node2 stopped: "
                        + orphans.stream().map(GracefulShutdownTest::describe).toList() + "\n--- node2 log ---\n"
                        + second.log());
        System.err.printf("done in %d ms%n", elapsedMs(t0));
    }

    /** What the test saw of the draining node, from SIGTERM until it stopped answering or the grace ended. */
    private record DrainObservation(
            boolean refusedSubmission,
            boolean notReady,
            int acceptedAfterTerm,
            boolean exitedEarly,
            List<String> otherRefusals) {}

    /**
     * Until both a refused submission and a not-ready answer are seen (or the node is gone, or the
     * grace period is over): POST /api/tasks must answer 503 with Retry-After and problem+json, GET
     * /health/ready 503. A submission that still got in before the hook ran is accepted work like any
     * other: its id joins {@code ids}.
     */
    private DrainObservation observeDrain(ChildNode node, List<String> ids, long termNanos) {
        long deadline = termNanos + TimeUnit.MILLISECONDS.toNanos(GRACE_MS);
        boolean refused = false;
        boolean notReady = false;
        int accepted = 0;
        List<String> otherRefusals = new ArrayList<>();
        while ((!refused || !notReady) && System.nanoTime() < deadline) {
            try {
                if (!refused) {
                    HttpResponse<String> answer = node.post("/api/tasks", sleep(SHORT_MS, 1));
                    if (answer.statusCode() == 202) {
                        ids.add(new JsonObject(answer.body()).getString("id"));
                        accepted++;
                    } else if (answer.statusCode() == 503
                            && !answer.body().contains("urn:taskline:problem:shutting-down")) {
                        // Refused, but not because the node drains (say, its journal is gone): not what is checked
                        // here.
                        otherRefusals.add(answer.statusCode() + " " + answer.body());
                    } else {
                        assertEquals(
                                503, answer.statusCode(), () -> "POST /api/tasks while draining: " + answer.body());
                        String retryAfter =
                                answer.headers().firstValue("Retry-After").orElse(null);
                        assertTrue(
                                retryAfter != null && Long.parseLong(retryAfter) > 0,
                                () -> "503 while draining without a positive Retry-After: "
                                        + answer.headers().map());
                        assertEquals(
                                "application/problem+json",
                                answer.headers().firstValue("Content-Type").orElse(null),
                                () -> "503 while draining: " + answer.headers().map());
                        JsonObject problem = new JsonObject(answer.body());
                        assertEquals(503, problem.getInteger("status"), answer::body);
                        assertEquals("urn:taskline:problem:shutting-down", problem.getString("type"), answer::body);
                        assertFalse(answer.body().contains("Exception"), answer::body);
                        refused = true;
                    }
                }
                if (!notReady) {
                    HttpResponse<String> ready = node.get("/health/ready");
                    if (ready.statusCode() == 503) {
                        notReady = true;
                    } else {
                        assertEquals(
                                200, ready.statusCode(), () -> "GET /health/ready while draining: " + ready.body());
                    }
                }
            } catch (UncheckedIOException e) {
                if (!node.isAlive()) {
                    // Gone already: the part not yet seen cannot be checked.
                    return new DrainObservation(refused, notReady, accepted, true, otherRefusals);
                }
            }
            pause(20);
        }
        assertTrue(
                refused,
                "no 503 to POST /api/tasks within the grace period while the node was up; its log:\n" + node.log());
        assertTrue(
                notReady,
                "GET /health/ready did not answer 503 within the grace period while the node was up; " + "its log:\n"
                        + node.log());
        return new DrainObservation(true, true, accepted, false, otherRefusals);
    }

    /**
     * One task's history must read: submitted, then claims; each claim is followed either by a
     * release (by node1, at shutdown, from running to pending with the next lease version) or by the
     * one and only succeeded event of that very lease. No lease ever lapses. The final attempt counts
     * claims minus releases.
     */
    private static List<String> checkTask(
            JsonObject task,
            String node1,
            String node2,
            boolean runningAtTerm,
            Map<String, List<JsonObject>> releasesById) {
        List<String> problems = new ArrayList<>();
        String id = task.getString("id");
        List<JsonObject> history = events(task);
        checkSucceededOnce(task, history, problems);
        if (history.stream().anyMatch(e -> "lease_expired".equals(e.getString("reason")))) {
            problems.add("has a lease_expired event: the restart waited for a lease to lapse");
        }
        List<JsonObject> claims = history.stream()
                .filter(e -> "claimed".equals(e.getString("reason")))
                .toList();
        List<JsonObject> releases = history.stream()
                .filter(e -> "released".equals(e.getString("reason")))
                .toList();
        if (!releases.isEmpty()) {
            releasesById.put(id, releases);
        }
        int attempt = task.getInteger("attempt");
        if (attempt != claims.size() - releases.size()) {
            problems.add("attempt is " + attempt + " but there are " + claims.size() + " claims and " + releases.size()
                    + " releases");
        }
        if (runningAtTerm) {
            if (releases.size() != 1) {
                problems.add("was running at SIGTERM but has " + releases.size() + " 'released' events, expected 1");
            }
            if (claims.isEmpty() || !claims.get(0).getString("workerId", "").startsWith(node1)) {
                problems.add("was running at SIGTERM but its first claim is not by " + node1);
            } else if (!releases.isEmpty()) {
                long firstClaim = claims.get(0).getLong("leaseVersion");
                JsonObject release = releases.get(0);
                if (release.getLong("leaseVersion", -1L) <= firstClaim) {
                    problems.add("released with lease version " + release.getLong("leaseVersion")
                            + ", not higher than its first claim's " + firstClaim);
                }
            }
            if (claims.size() != 2) {
                problems.add("was running at SIGTERM: expected 2 claims (node1, then node2), got " + claims.size());
            }
        } else if (!releases.isEmpty()) {
            problems.add("was not running at SIGTERM but has 'released' events");
        }
        checkLeases(
                history,
                node1,
                node2,
                "released",
                (i, claim, worker, version, next) -> {
                    if (!worker.startsWith(node1)) {
                        problems.add("a lease of node2 was released (" + worker + " v" + version
                                + "), but node2 was not stopped");
                    }
                    if (!"running".equals(next.getString("from")) || !"pending".equals(next.getString("to"))) {
                        problems.add("release at #" + (i + 1) + " goes from " + next.getString("from") + " to "
                                + next.getString("to") + ", not from running to pending");
                    }
                    if (!worker.equals(next.getString("workerId"))) {
                        problems.add("release at #" + (i + 1) + " is by " + next.getString("workerId")
                                + ", not the claimer " + worker);
                    }
                    Long releasedVersion = next.getLong("leaseVersion");
                    if (releasedVersion == null || releasedVersion != version + 1) {
                        problems.add("release at #" + (i + 1) + " has lease version " + releasedVersion + ", expected "
                                + (version + 1));
                    }
                    Integer releasedAttempt = next.getInteger("attempt");
                    Integer claimAttempt = claim.getInteger("attempt");
                    if (releasedAttempt == null || claimAttempt == null || releasedAttempt != claimAttempt - 1) {
                        problems.add("release at #" + (i + 1) + " leaves attempt " + releasedAttempt
                                + " after a claim with attempt " + claimAttempt
                                + ": a release must not spend an attempt");
                    }
                    JsonObject reclaim = history.subList(i + 2, history.size()).stream()
                            .filter(x -> "claimed".equals(x.getString("reason")))
                            .findFirst()
                            .orElse(null);
                    if (reclaim == null || reclaim.getLong("leaseVersion") <= releasedVersion) {
                        problems.add(
                                "release at #" + (i + 1) + " is not followed by a claim with a higher lease version");
                    } else {
                        // Taken over at once by the restarted node, not after a lease's worth of waiting.
                        Duration gap = Duration.between(
                                Instant.parse(next.getString("at")), Instant.parse(reclaim.getString("at")));
                        if (gap.toMillis() >= LEASE_MS / 2) {
                            problems.add("reclaimed " + gap + " after its release: as long as waiting for the lease");
                        }
                        if (!reclaim.getString("workerId", "").startsWith(node2)) {
                            problems.add("reclaimed by " + reclaim.getString("workerId") + ", not by " + node2);
                        }
                    }
                },
                problems);
        return problems;
    }

    private static JsonObject sleep(int ms, int steps) {
        return new JsonObject()
                .put("type", "sleep")
                .put("payload", new JsonObject().put("ms", ms).put("steps", steps));
    }

    private static String submit(ChildNode node, JsonObject task) {
        HttpResponse<String> answer = node.post("/api/tasks", task);
        assertEquals(
                202,
                answer.statusCode(),
                () -> "POST /api/tasks answered " + answer.statusCode() + ": " + answer.body());
        return new JsonObject(answer.body()).getString("id");
    }

    private static JsonObject defaultQueue(ChildNode node) {
        JsonArray queues = node.getJson("/api/queues").getJsonArray("queues");
        for (int i = 0; i < queues.size(); i++) {
            if ("default".equals(queues.getJsonObject(i).getString("name"))) {
                return queues.getJsonObject(i);
            }
        }
        throw new AssertionError("no default queue in GET /api/queues: " + queues.encode());
    }

    /**
     * SIGTERM through the process handle. {@code Process.destroy()} (and so {@code ChildNode.stop})
     * also closes our end of the child's stdout, which ends ChildNode's log capture at once: nothing
     * the node logs while it drains would be seen.
     */
    private static void sigterm(ChildNode node) {
        assertTrue(node.process().toHandle().destroy(), () -> "could not send SIGTERM to " + node.name);
    }

    /** Waits for the process to exit by itself (it was already sent SIGTERM); fails with its log. */
    private static int awaitExit(ChildNode node, long sinceNanos, Duration wait) throws InterruptedException {
        long left = sinceNanos + wait.toNanos() - System.nanoTime();
        if (!node.process().waitFor(Math.max(0, left), TimeUnit.NANOSECONDS)) {
            throw new AssertionError(node.name + " (pid " + node.pid() + ") did not exit within " + wait
                    + " of SIGTERM; its log:\n" + node.log());
        }
        // Let the log reader catch the last lines.
        long logDeadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(2);
        while (!node.log().contains(STOPPED) && System.nanoTime() < logDeadline) {
            pause(20);
        }
        return node.process().exitValue();
    }

    private List<ProcessHandle> awaitNoProcessesOnDataDir(Duration wait) {
        long deadline = System.nanoTime() + wait.toNanos();
        List<ProcessHandle> left = processesOnDataDir();
        while (!left.isEmpty() && System.nanoTime() < deadline) {
            pause(100);
            left = processesOnDataDir();
        }
        return left;
    }
}
