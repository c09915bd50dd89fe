package dev.taskline.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.taskline.testing.TestNode;
import dev.taskline.testing.TestPostgres;
import io.vertx.core.buffer.Buffer;
import io.vertx.ext.web.client.HttpResponse;
import java.util.List;
import org.junit.jupiter.api.Test;

/** What every answer says to the browser: the page's policy, no sniffing, no frames. */
class SecurityHeadersTest {

    @Test
    void the_dashboard_and_the_api_answer_with_the_policy_and_without_hsts_over_plain_http() throws Exception {
        try (TestNode node = TestNode.start(TestPostgres.newDatabase(), "{}")) {
            for (String path : List.of("/", "/app.js", "/api/stats", "/api/tasks/not-an-id", "/no-such-page")) {
                HttpResponse<Buffer> answer = node.get(path);
                String policy = answer.getHeader("Content-Security-Policy");
                assertTrue(policy != null && policy.contains("script-src 'self'"), path + ": " + policy);
                assertTrue(policy.contains("frame-ancestors 'none'"), path + ": " + policy);
                assertTrue(!policy.contains("unsafe-inline") && !policy.contains("unsafe-eval"), path + ": " + policy);
                assertEquals("nosniff", answer.getHeader("X-Content-Type-Options"), path);
                assertEquals("DENY", answer.getHeader("X-Frame-Options"), path);
                assertNull(answer.getHeader("Strict-Transport-Security"), path + ": plain HTTP says nothing of TLS");
            }
        }
    }
}
