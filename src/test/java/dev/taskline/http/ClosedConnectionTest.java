package dev.taskline.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.taskline.testing.TestNode;
import dev.taskline.testing.TestPostgres;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.junit.jupiter.api.Test;

/**
 * A connection that goes while its request body is still arriving (a client giving up, or a node
 * closing its connections as it shuts down) is no failure of the server: nothing to answer, nothing
 * logged as severe.
 */
class ClosedConnectionTest {

    @Test
    void a_request_whose_connection_closes_mid_body_is_no_server_failure() throws Exception {
        Logger problems = Logger.getLogger(Problems.class.getName());
        BlockingQueue<LogRecord> records = new LinkedBlockingQueue<>();
        Handler capture = new Handler() {
            @Override
            public void publish(LogRecord record) {
                records.add(record);
            }

            @Override
            public void flush() {}

            @Override
            public void close() {}
        };
        capture.setLevel(Level.ALL);
        Level before = problems.getLevel();
        problems.setLevel(Level.FINE);
        problems.addHandler(capture);
        try (TestNode node = TestNode.start(TestPostgres.newDatabase(), "{}")) {
            try (Socket socket = new Socket("127.0.0.1", node.node.httpPort())) {
                OutputStream out = socket.getOutputStream();
                out.write(("POST /api/flows HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                                + "Content-Length: 100000\r\n\r\n{\"tasks\": [")
                        .getBytes(StandardCharsets.US_ASCII));
                out.flush();
            }
            LogRecord record = records.poll(TestNode.WAIT.toSeconds(), TimeUnit.SECONDS);
            assertTrue(record != null, "the server saw the connection go");
            assertEquals(Level.FINE, record.getLevel(), record.getMessage());
            assertTrue(record.getMessage().contains("POST /api/flows"), record.getMessage());
            assertEquals(200, node.get("/health/ready").statusCode());
        } finally {
            problems.removeHandler(capture);
            problems.setLevel(before);
        }
    }
}
