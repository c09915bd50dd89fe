package dev.taskline.journal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.taskline.testing.ChildNode;
import dev.taskline.testing.ChildNodeTest;
import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A node holds its data directory while it runs: a second one started on it refuses to start and
 * leaves the first, and its PostgreSQL, alone. (That a PostgreSQL whose node was killed is stopped
 * by the next start is KillRecoveryTest's.)
 */
class DataDirectoryLockTest extends ChildNodeTest {

    private static final String CONFIG = """
      {"queues":{"default":{"slots":1,"capacity":100}}}
      """;

    @Test
    @Timeout(value = 4, unit = TimeUnit.MINUTES)
    void a_second_node_on_a_running_nodes_data_directory_refuses_to_start_and_leaves_the_first_alone()
            throws Exception {
        Map<String, String> env = childEnv(CONFIG);
        ChildNode first = startChild("node1", env);
        long postgres = postmasterPid(dataDir());

        ChildNode second = launchChild("node2", env);
        int code = second.awaitExit(START_WAIT);

        assertNotEquals(0, code, "the second node must fail to start; its log:\n" + second.log());
        String expected = "the data directory " + dataDir().toRealPath() + " is in use by a running Taskline node (pid "
                + first.pid() + ")";
        assertTrue(second.log().contains(expected), "expected '" + expected + "' in its log:\n" + second.log());
        assertFalse(second.log().contains("from an earlier run still holds"), second.log());
        assertFalse(second.log().contains("\tat "), "a refusal, not a stack trace:\n" + second.log());

        assertTrue(ProcessHandle.of(postgres).map(ProcessHandle::isAlive).orElse(false), "its PostgreSQL runs on");
        assertEquals(postgres, postmasterPid(dataDir()));
        assertEquals(200, first.get("/health/ready").statusCode(), first.log());
        HttpResponse<String> accepted = first.post(
                "/api/tasks", new JsonObject().put("type", "sleep").put("payload", new JsonObject().put("ms", 1)));
        assertEquals(202, accepted.statusCode(), accepted.body());
    }

    @Test
    void a_second_start_in_the_same_process_is_refused_and_the_first_server_serves_on() throws Exception {
        Path dir = Files.createDirectories(tmp.resolve("same-jvm"));
        EmbeddedPostgresServer server = EmbeddedPostgresServer.start(dir, false);
        try {
            DataDirectoryInUseException refused =
                    assertThrows(DataDirectoryInUseException.class, () -> EmbeddedPostgresServer.start(dir, false));
            assertTrue(
                    refused.getMessage()
                            .contains("(pid " + ProcessHandle.current().pid() + ")"),
                    refused.getMessage());
            assertEquals(1, selectOne(server));
        } finally {
            server.close();
        }
        // Closed, the directory is free again: the next start takes it (and the lock file stays harmless).
        EmbeddedPostgresServer again = EmbeddedPostgresServer.start(dir, false);
        try {
            assertEquals(1, selectOne(again));
        } finally {
            again.close();
        }
    }

    private static int selectOne(EmbeddedPostgresServer server) throws Exception {
        var url = PgUrl.parse(server.url());
        try (Connection c = DriverManager.getConnection(
                        "jdbc:postgresql://localhost:" + server.port() + "/postgres",
                        url.getUser(),
                        url.getPassword());
                Statement s = c.createStatement();
                ResultSet r = s.executeQuery("SELECT 1")) {
            r.next();
            return r.getInt(1);
        }
    }

    private static long postmasterPid(Path dataDir) throws IOException {
        return Long.parseLong(Files.readAllLines(dataDir.resolve("pg").resolve("postmaster.pid"))
                .get(0)
                .trim());
    }
}
