package dev.taskline.journal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vertx.pgclient.PgConnectOptions;
import io.vertx.pgclient.SslMode;
import org.junit.jupiter.api.Test;

class PgUrlTest {

    @Test
    void one_host_reads_as_it_always_did() {
        PgConnectOptions o = PgUrl.parse("postgres://ann:p%40ss@db.example:6543/jobs");
        assertEquals("db.example", o.getHost());
        assertEquals(6543, o.getPort());
        assertEquals("ann", o.getUser());
        assertEquals("p@ss", o.getPassword());
        assertEquals("jobs", o.getDatabase());
        PgTarget target = PgUrl.target("postgresql://ann@db.example/jobs");
        assertEquals(5432, target.servers().get(0).getPort());
        assertEquals(PgTarget.Session.ANY, target.session());
        assertFalse(target.mustChoose());
    }

    @Test
    void several_hosts_in_order_with_what_a_session_must_be() {
        PgTarget target =
                PgUrl.target("postgresql://u:p@h1:5432,h2:5433,[::1]:5434,h4/db?target_session_attrs=read-write");
        assertEquals(4, target.servers().size());
        assertEquals("h1", target.servers().get(0).getHost());
        assertEquals(5433, target.servers().get(1).getPort());
        assertEquals("::1", target.servers().get(2).getHost());
        assertEquals(5434, target.servers().get(2).getPort());
        assertEquals(5432, target.servers().get(3).getPort());
        target.servers().forEach(s -> {
            assertEquals("u", s.getUser());
            assertEquals("db", s.getDatabase());
        });
        assertEquals(PgTarget.Session.READ_WRITE, target.session());
        assertTrue(target.mustChoose());
        assertEquals(PgTarget.DEFAULT_CONNECT_TIMEOUT_MS, target.connectTimeoutMs());
        assertEquals(3_000, PgUrl.target("postgresql://h/db?connect_timeout=3").connectTimeoutMs());
    }

    @Test
    void a_session_is_taken_as_libpq_takes_it() {
        assertTrue(PgTarget.Session.READ_WRITE.takes(false, false, false));
        assertFalse(PgTarget.Session.READ_WRITE.takes(true, true, false));
        assertFalse(PgTarget.Session.READ_WRITE.takes(false, true, false)); // default_transaction_read_only
        assertTrue(PgTarget.Session.PRIMARY.takes(false, true, false));
        assertTrue(PgTarget.Session.STANDBY.takes(true, true, false));
        assertFalse(PgTarget.Session.STANDBY.takes(false, false, false));
        assertFalse(PgTarget.Session.PREFER_STANDBY.takes(false, false, true));
        assertTrue(PgTarget.Session.PREFER_STANDBY.takes(false, false, false));
        assertTrue(PgTarget.Session.ANY.takes(true, true, false));
    }

    @Test
    void tls_as_sslmode_says() {
        assertNull(PgUrl.parse("postgresql://h/db").getSslOptions());
        PgConnectOptions require = PgUrl.parse("postgresql://h/db?sslmode=require");
        assertEquals(SslMode.REQUIRE, require.getSslMode());
        assertTrue(require.getSslOptions().isTrustAll());
        PgConnectOptions full = PgUrl.parse("postgresql://h/db?sslmode=verify-full&sslrootcert=/etc/root.crt");
        assertEquals(SslMode.VERIFY_FULL, full.getSslMode());
        assertFalse(full.getSslOptions().isTrustAll());
        assertEquals("HTTPS", full.getSslOptions().getHostnameVerificationAlgorithm());
        assertEquals(
                "",
                PgUrl.parse("postgresql://h/db?sslmode=verify-ca&sslrootcert=/r.crt")
                        .getSslOptions()
                        .getHostnameVerificationAlgorithm());
        assertEquals(
                SslMode.DISABLE,
                PgUrl.parse("postgresql://h/db?sslmode=disable").getSslMode());
    }

    @Test
    void what_it_cannot_honour_is_refused_by_name() {
        assertMessage("'keepalives'", "postgresql://h/db?keepalives=1");
        assertMessage("target_session_attrs", "postgresql://h/db?target_session_attrs=writable");
        assertMessage("sslmode", "postgresql://h/db?sslmode=maybe");
        assertMessage("sslrootcert", "postgresql://h/db?sslmode=verify-full");
        assertMessage("port", "postgresql://h:99999/db");
        assertMessage("no host", "postgresql://h1,,h2/db");
        assertMessage("not a PostgreSQL URL", "mysql://h/db");
        assertMessage("at most", "postgresql://" + "h,".repeat(16) + "h/db");
    }

    private static void assertMessage(String part, String url) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> PgUrl.target(url));
        assertTrue(e.getMessage().contains(part), e.getMessage());
    }
}
