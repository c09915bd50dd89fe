package dev.taskline.journal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.taskline.testing.PgPair;
import dev.taskline.testing.PgTls;
import dev.taskline.testing.TestNode;
import io.vertx.core.json.JsonObject;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The journal over TLS, against a PostgreSQL that refuses anything else, with a certificate made
 * for {@code localhost} only: each sslmode does what libpq's does, and a node that cannot connect as
 * its URL says does not start.
 */
class PgTlsTest {

    private static final String CONFIG = "{\"queues\": {\"default\": {}}}";
    private static PgTls server;

    @BeforeAll
    static void start() throws Exception {
        Path bin = PgPair.binaries();
        assumeTrue(bin != null, "no PostgreSQL 15 binaries on this machine");
        assumeTrue(Files.isExecutable(Path.of("/usr/bin/openssl")), "no openssl on this machine");
        server = PgTls.start(bin);
    }

    @AfterAll
    static void stop() throws Exception {
        if (server != null) {
            server.close();
        }
    }

    @Test
    void verify_full_runs_a_task_with_every_connection_encrypted() throws Exception {
        String url = server.url("localhost", "sslmode=verify-full&sslrootcert=" + server.root(false));
        try (TestNode node = TestNode.start(url, CONFIG)) {
            var accepted = node.post(
                    "/api/tasks", new JsonObject().put("type", "sleep").put("payload", new JsonObject().put("ms", 1)));
            assertEquals(202, accepted.statusCode(), accepted.bodyAsString());
            node.waitForState(accepted.bodyAsJsonObject().getString("id"), "succeeded");
            String[] counts = server.encryptedConnections().split("/");
            assertEquals(counts[1], counts[0], "encrypted of all the node's connections");
        }
    }

    @Test
    void verify_ca_checks_the_root_but_not_the_name() throws Exception {
        // The certificate names localhost, not 127.0.0.1: verify-ca takes it, verify-full does not.
        String root = "sslrootcert=" + server.root(false);
        try (TestNode node = TestNode.start(server.url("127.0.0.1", "sslmode=verify-ca&" + root), CONFIG)) {
            assertEquals(
                    200, TestNode.await(node.http.get("/health/ready").send()).statusCode());
        }
        refused(server.url("127.0.0.1", "sslmode=verify-full&" + root), "SSL handshake failed");
    }

    @Test
    void a_certificate_from_another_root_or_no_tls_at_all_is_refused() {
        refused(server.url("localhost", "sslmode=verify-ca&sslrootcert=" + server.root(true)), "SSL handshake failed");
        refused(server.url("localhost", "sslmode=disable"), "no encryption");
    }

    /** A node on {@code url} does not start, for the reason {@code because} names. */
    private static void refused(String url, String because) {
        Exception e =
                assertThrows(Exception.class, () -> TestNode.start(url, CONFIG).close());
        StringBuilder why = new StringBuilder();
        for (Throwable t = e; t != null; t = t.getCause()) {
            why.append(t).append(" / ");
        }
        assertTrue(why.toString().contains(because), "refused for another reason: " + why);
    }

    @Test
    void require_encrypts_without_checking() throws Exception {
        try (TestNode node = TestNode.start(server.url("127.0.0.1", "sslmode=require"), CONFIG)) {
            assertEquals(
                    200, TestNode.await(node.http.get("/health/ready").send()).statusCode());
        }
    }
}
