package dev.taskline.journal;

import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.taskline.model.problem.JournalUnavailableException;
import io.netty.channel.ConnectTimeoutException;
import io.vertx.core.VertxException;
import io.vertx.pgclient.PgException;
import java.net.ConnectException;
import java.net.SocketException;
import java.nio.channels.ClosedChannelException;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.Test;

/** Which failures of a journal call mean the journal is away (503), and which stay what they are. */
class JournalFailuresTest {

    private static void unavailable(Throwable failure) {
        assertInstanceOf(JournalUnavailableException.class, JournalFailures.classify(failure), failure.toString());
    }

    @Test
    void every_connection_level_failure_means_the_journal_is_away() {
        unavailable(new SocketException("Connection reset"));
        unavailable(new VertxException(new SocketException("Connection reset"), true));
        unavailable(new ConnectException("Connection refused"));
        unavailable(new ConnectTimeoutException("connection timed out"));
        unavailable(new ClosedChannelException());
        unavailable(new TimeoutException());
        unavailable(new VertxException("Pool closed", true));
        unavailable(new PgException("terminating connection due to administrator command", "FATAL", "57P01", null));
        unavailable(new PgException("the database system is starting up", "FATAL", "57P03", null));
        unavailable(new PgException("too many clients", "FATAL", "53300", null));
    }

    @Test
    void a_fault_of_the_request_or_of_ours_stays_what_it_was() {
        PgException unique = new PgException("duplicate key", "ERROR", "23505", null);
        assertSame(unique, JournalFailures.classify(unique));
        IllegalStateException ours = new IllegalStateException("insert journaled 1 of 2 events");
        assertSame(ours, JournalFailures.classify(ours));
        PgException badText =
                new PgException("invalid byte sequence for encoding \"UTF8\": 0x00", "ERROR", "22021", null);
        assertSame(badText, JournalFailures.classify(badText));
    }

    @Test
    void a_value_the_journal_cannot_keep_is_a_refusal_for_good_and_nothing_else_is() {
        String nul = JournalFailures.refusal(new VertxException(
                new PgException(
                        "unsupported Unicode escape sequence",
                        "ERROR",
                        "22P05",
                        "\\u0000 cannot be converted to text."),
                true));
        assertTrue(nul.contains("unsupported Unicode escape sequence") && nul.contains("22P05"), nul);
        assertNotNull(JournalFailures.refusal(new PgException("date out of range", "ERROR", "22008", null)));
        assertNotNull(JournalFailures.refusal(new PgException("value too long", "ERROR", "54000", null)));
        assertNotNull(JournalFailures.refusal(new io.vertx.core.json.EncodeException("no codec")));
        assertNull(JournalFailures.refusal(new PgException("deadlock detected", "ERROR", "40P01", null)));
        assertNull(JournalFailures.refusal(new PgException("too many clients", "FATAL", "53300", null)));
        assertNull(JournalFailures.refusal(new SocketException("Connection reset")));
        assertNull(JournalFailures.refusal(new IllegalStateException("a bug of ours")));
    }
}
