package dev.taskline.recovery;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.taskline.testing.ChildNode;
import dev.taskline.testing.ChildNodeTest;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Black-box: every task answered 202 reaches exactly one terminal state although the node is killed
 * with SIGKILL mid-run and started again on the same data. The node runs as a child JVM on its
 * embedded PostgreSQL, which outlives the SIGKILL; the second start must stop that leftover and
 * come up on the same data, and the tasks the dead node held must be taken over once their leases
 * lapse.
 */
class KillRecoveryTest extends ChildNodeTest {

    private static final String CONFIG = """
      {"queues":{"default":{"slots":4,"capacity":1000,"leaseMs":1500,"heartbeatMs":300}},
       "recovery":{"intervalMs":200}}
      """;
    private static final int BATCHES = 3;
    private static final int PER_BATCH = 10;
    private static final int TASKS = BATCHES * PER_BATCH;
    private static final Duration FINISH_WAIT = Duration.ofSeconds(120);

    @Test
    @Timeout(value = 4, unit = TimeUnit.MINUTES)
    void every_accepted_task_ends_exactly_once_across_kill_and_restart() throws Exception {
        Map<String, String> env = childEnv(CONFIG);
        Path dataDir = dataDir();
        long t0 = System.nanoTime();

        // --- first node: accept work, let it get going, then SIGKILL it mid-run ---
        ChildNode first = startChild("node1", env);
        System.err.printf("node1 listening on %d after %d ms%n", first.port(), elapsedMs(t0));

        List<String> ids = new ArrayList<>();
        for (int b = 0; b < BATCHES; b++) {
            JsonArray tasks = new JsonArray();
            for (int i = 0; i < PER_BATCH; i++) {
                tasks.add(new JsonObject()
                        .put("type", "sleep")
                        .put("payload", new JsonObject().put("ms", 400).put("steps", 4)));
            }
            HttpResponse<String> answer = first.post("/api/batches", new JsonObject().put("tasks", tasks));
            assertEquals(
                    202, answer.statusCode(), () -> "batch answered " + answer.statusCode() + ": " + answer.body());
            JsonArray accepted = new JsonObject(answer.body()).getJsonArray("tasks");
            assertEquals(PER_BATCH, accepted.size(), answer::body);
            for (int i = 0; i < accepted.size(); i++) {
                ids.add(accepted.getJsonObject(i).getString("id"));
            }
        }
        assertEquals(TASKS, new LinkedHashSet<>(ids).size(), () -> "ids not distinct: " + ids);

        // Kill while some attempt is early in its 400 ms (progress 0 or 25 %, so 50 ms or more to go):
        // tasks claimed together also finish together, and a kill just as they all end would leave
        // nothing for the second node to take over.
        Map<String, JsonObject> rows = new HashMap<>();
        Map<String, String> beforeKill = pollStates(
                first,
                ids,
                Duration.ofSeconds(60),
                rows,
                s -> count(s, "succeeded") >= 1 && rows.values().stream().anyMatch(KillRecoveryTest::earlyInRun),
                "at least one task succeeded and one running at progress < 75 %");
        first.kill(Duration.ofSeconds(30));
        System.err.printf(
                "node1 killed after %d ms; states just before: %s, progress of the running: %s%n",
                elapsedMs(t0),
                histogram(beforeKill),
                rows.values().stream()
                        .filter(r -> "running".equals(r.getString("state")))
                        .map(r -> r.getJsonObject("progress").getInteger("percent"))
                        .toList());

        // The embedded PostgreSQL is a separate process and must have outlived the JVM.
        long leftoverPid = postmasterPid(dataDir)
                .orElseThrow(() -> new AssertionError(
                        "no postmaster.pid under " + dataDir + " after the SIGKILL; node1 log:\n" + first.log()));
        assertTrue(
                ProcessHandle.of(leftoverPid).map(ProcessHandle::isAlive).orElse(false),
                "expected the embedded PostgreSQL (pid " + leftoverPid + ") to outlive the killed JVM");

        // --- second node on the same data: it stops the leftover and takes the work over ---
        ChildNode second = startChild("node2", env);
        System.err.printf("node2 listening on %d after %d ms%n", second.port(), elapsedMs(t0));
        assertTrue(
                second.log().contains("from an earlier run still holds"),
                "node2 should have reported stopping the leftover PostgreSQL; its log:\n" + second.log());
        assertFalse(
                ProcessHandle.of(leftoverPid).map(ProcessHandle::isAlive).orElse(false),
                "the leftover PostgreSQL " + leftoverPid + " is still alive after node2 came up");

        Map<String, String> end = pollStates(
                second,
                ids,
                FINISH_WAIT,
                new HashMap<>(),
                s -> s.values().stream().allMatch(TERMINAL::contains),
                "all " + TASKS + " tasks terminal");
        System.err.printf("all terminal after %d ms: %s%n", elapsedMs(t0), histogram(end));

        // --- the invariant, task by task, from the journal's history ---
        String node1 = first.nodeId() + "/";
        String node2 = second.nodeId() + "/";
        List<String> problems = new ArrayList<>();
        Set<String> takenOver = new LinkedHashSet<>();
        for (String id : ids) {
            JsonObject task = second.getJson("/api/tasks/" + id);
            List<String> taskProblems = checkTask(task, node1, node2, takenOver);
            if ("running".equals(beforeKill.get(id))
                    && events(task).stream()
                            .noneMatch(e -> "claimed".equals(e.getString("reason"))
                                    && e.getString("workerId", "").startsWith(node1))) {
                taskProblems.add("was running before the kill but has no claim by " + node1);
            }
            if (!taskProblems.isEmpty()) {
                problems.add(id + ": " + String.join("; ", taskProblems) + "\n    " + task.encode());
            }
        }
        System.err.printf("tasks taken over after the kill: %d %s%n", takenOver.size(), takenOver);
        if (!problems.isEmpty()) {
            fail(problems.size() + " task(s) break the invariant:\n" + String.join("\n", problems)
                    + "\n--- node1 log ---\n" + first.log() + "\n--- node2 log ---\n" + second.log());
        }
        assertFalse(
                takenOver.isEmpty(),
                "no task was running at the kill, so no takeover was exercised; " + "states just before the kill: "
                        + beforeKill);

        // --- graceful stop: the shutdown hook stops the embedded PostgreSQL; nothing may be left ---
        int exit = second.stop(Duration.ofSeconds(60));
        System.err.printf("node2 exited with %d after SIGTERM, at %d ms%n", exit, elapsedMs(t0));
        long orphanDeadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        List<ProcessHandle> orphans = processesOnDataDir();
        while (!orphans.isEmpty() && System.nanoTime() < orphanDeadline) {
            pause(100);
            orphans = processesOnDataDir();
        }
        assertTrue(
                orphans.isEmpty(),
                () -> "processes still running on " + tmp.resolve("data") + " after node2 stopped: "
                        + processesOnDataDir().stream()
                                .map(KillRecoveryTest::describe)
                                .toList() + "\n--- node2 log ---\n"
                        + second.log());
        System.err.printf("done in %d ms%n", elapsedMs(t0));
    }

    /**
     * One task's history must read: submitted, then claims; every claim but the last ends in
     * lease_expired (of that very lease), the last in the one and only succeeded event; lease versions
     * only grow; attempt counts the claims.
     */
    private static List<String> checkTask(JsonObject task, String node1, String node2, Set<String> takenOver) {
        List<String> problems = new ArrayList<>();
        String id = task.getString("id");
        List<JsonObject> history = events(task);
        checkSucceededOnce(task, history, problems);
        List<JsonObject> claims = history.stream()
                .filter(e -> "claimed".equals(e.getString("reason")))
                .toList();
        if (task.getInteger("attempt") != claims.size()) {
            problems.add("attempt is " + task.getInteger("attempt") + " but there are " + claims.size() + " claims");
        }
        checkLeases(
                history,
                node1,
                node2,
                "lease_expired",
                (i, claim, worker, version, next) -> {
                    JsonObject detail = next.getJsonObject("detail", new JsonObject());
                    if (!version.equals(detail.getLong("previousLeaseVersion"))
                            || !worker.equals(detail.getString("previousWorker"))) {
                        problems.add("lease_expired at #" + (i + 1) + " does not name the claim's lease: " + detail);
                    }
                    JsonObject reclaim = history.subList(i + 2, history.size()).stream()
                            .filter(x -> "claimed".equals(x.getString("reason")))
                            .findFirst()
                            .orElse(null);
                    if (reclaim == null || reclaim.getLong("leaseVersion") <= version) {
                        problems.add("lease_expired at #" + (i + 1)
                                + " is not followed by a claim with a higher lease version");
                    }
                    if (worker.startsWith(node1)) {
                        takenOver.add(id);
                    } else {
                        problems.add("a lease of the surviving node lapsed (" + worker + " v" + version + ")");
                    }
                },
                problems);
        return problems;
    }

    /** Running and at most at its first progress step: the attempt has a good while to go. */
    private static boolean earlyInRun(JsonObject row) {
        return "running".equals(row.getString("state"))
                && row.getJsonObject("progress", new JsonObject()).getInteger("percent", 0) < 75;
    }

    private static long count(Map<String, String> states, String state) {
        return states.values().stream().filter(state::equals).count();
    }

    private static Optional<Long> postmasterPid(Path dataDir) throws IOException {
        Path pidFile = dataDir.resolve("pg").resolve("postmaster.pid");
        if (!Files.isRegularFile(pidFile)) {
            return Optional.empty();
        }
        List<String> lines = Files.readAllLines(pidFile);
        return lines.isEmpty()
                ? Optional.empty()
                : Optional.of(Long.parseLong(lines.get(0).trim()));
    }
}
