package dev.taskline.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class ConfigLoaderTest {

    private static final String PG = "postgresql://taskline:secret@db.example:5433/taskline";

    @Test
    void an_empty_config_gives_the_documented_defaults() {
        TasklineConfig config = ConfigLoader.fromJson("{}", Map.of());
        assertEquals("127.0.0.1", config.http().host());
        assertEquals(8080, config.http().port());
        assertEquals(1024 * 1024, config.http().bodyLimitBytes());
        assertEquals(100, config.http().maxBatchSize());
        assertEquals(Path.of("./data"), config.journal().dataDir());
        assertNull(config.journal().pgUrl(), "no URL means the embedded PostgreSQL");
        QueueConfig queue = config.queue("default");
        assertEquals(4, queue.slots());
        assertEquals(10_000, queue.capacity());
        assertEquals(0, queue.tenantLimit(), "no tenant limit unless one is set");
        assertEquals(1, config.queues().size());
    }

    @Test
    void handler_jars_are_looked_for_in_handlers_unless_the_file_or_the_environment_says_otherwise() {
        assertEquals(
                Path.of("./handlers"),
                ConfigLoader.fromJson("{}", Map.of()).handlers().dir());
        String file = "{\"handlers\":{\"dir\":\"/opt/taskline/handlers\"}}";
        assertEquals(
                Path.of("/opt/taskline/handlers"),
                ConfigLoader.fromJson(file, Map.of()).handlers().dir());
        assertEquals(
                Path.of("/srv/handlers"),
                ConfigLoader.fromJson(file, Map.of(ConfigLoader.ENV_HANDLERS_DIR, "/srv/handlers"))
                        .handlers()
                        .dir());
    }

    @Test
    void the_default_queue_exists_even_when_only_other_queues_are_configured() {
        TasklineConfig config = ConfigLoader.fromJson("{\"queues\":{\"fast\":{\"slots\":2}}}", Map.of());
        assertEquals(2, config.queue("fast").slots());
        assertEquals(4, config.queue("default").slots());
    }

    @Test
    void a_queue_claims_ahead_four_tasks_a_slot_and_at_least_a_thousand_unless_told() {
        TasklineConfig config = ConfigLoader.fromJson(
                "{\"queues\":{\"default\":{\"slots\":3},\"wide\":{\"slots\":500},\"single\":{\"slots\":2,\"claimAhead\":0}}}",
                Map.of());
        assertEquals(1000, config.queue("default").claimAhead());
        assertEquals(2000, config.queue("wide").claimAhead());
        assertEquals(0, config.queue("single").claimAhead());
    }

    @Test
    void key_limits_read_a_bound_for_every_key_and_some_keys_own() {
        TasklineConfig config = ConfigLoader.fromJson(
                "{\"queues\":{\"default\":{\"keyConcurrency\":2,\"keyLimits\":{\"model-b\":8}},\"free\":{}}}",
                Map.of());
        assertEquals(2, config.queue("default").keyLimits().limit("model-a"));
        assertEquals(8, config.queue("default").keyLimits().limit("model-b"));
        assertEquals(0, config.queue("default").keyLimits().limit(null), "a task without a key is not bounded");
        assertEquals(0, config.queue("free").keyLimits().limit("model-a"));
    }

    @Test
    void a_rate_limit_reads_its_budget_and_window_and_is_off_unless_set() {
        TasklineConfig config = ConfigLoader.fromJson(
                "{\"queues\":{\"default\":{\"rateLimit\":{\"tasks\":100,"
                        + "\"perMs\":1000}},\"keyed\":{\"rateLimit\":{\"tasks\":5,\"perMs\":10,\"perKey\":true}},\"free\":{}}}",
                Map.of());
        assertEquals(
                new QueueConfig.RateLimit(100, 1000, false),
                config.queue("default").rateLimit());
        assertEquals(100.0, config.queue("default").rateLimit().perSecond());
        assertEquals(
                new QueueConfig.RateLimit(5, 10, true), config.queue("keyed").rateLimit());
        assertNull(config.queue("free").rateLimit());
    }

    @Test
    void a_queue_with_only_a_lease_gets_a_heartbeat_a_third_of_it() {
        TasklineConfig config = ConfigLoader.fromJson("{\"queues\":{\"default\":{\"leaseMs\":9000}}}", Map.of());
        assertEquals(3000, config.queue("default").heartbeatMs());
    }

    @Test
    void the_environment_overrides_host_port_database_and_data_dir() {
        String file = "{\"http\":{\"host\":\"10.0.0.1\",\"port\":9000},\"auth\":{\"allowAnonymous\":true},"
                + "\"journal\":{\"pgUrl\":\"postgresql://a:b@file-host:5432/x\",\"dataDir\":\"/var/file\"}}";
        TasklineConfig config = ConfigLoader.fromJson(
                file,
                Map.of(
                        ConfigLoader.ENV_HTTP_HOST, "0.0.0.0",
                        ConfigLoader.ENV_HTTP_PORT, "8181",
                        ConfigLoader.ENV_PG_URL, PG,
                        ConfigLoader.ENV_DATA_DIR, "/srv/taskline"));
        assertEquals("0.0.0.0", config.http().host());
        assertEquals(8181, config.http().port());
        assertEquals(PG, config.journal().pgUrl());
        assertEquals(Path.of("/srv/taskline"), config.journal().dataDir());
    }

    @Test
    void blank_environment_values_do_not_override_the_file() {
        // Compose files often pass "VAR=" for unset variables; that must not blank a setting.
        TasklineConfig config = ConfigLoader.fromJson(
                "{\"http\":{\"port\":9000}}", Map.of(ConfigLoader.ENV_HTTP_PORT, "", ConfigLoader.ENV_HTTP_HOST, "  "));
        assertEquals(9000, config.http().port());
        assertEquals("127.0.0.1", config.http().host());
    }

    @Test
    void the_packaged_config_file_parses() {
        TasklineConfig config = ConfigLoader.fromFile(Path.of("conf/taskline.json"), Map.of());
        assertEquals(8080, config.http().port());
        assertEquals(4, config.queue("default").slots());
        assertEquals(10_000, config.queue("default").capacity());
        assertEquals(2, config.queue("matching").slots());
        assertTrue(config.queue("python").remote(), "the README's Python worker runs it");
        assertTrue(config.queue("node").remote(), "the README's Node worker runs it");
        assertEquals(1, config.triggers().size(), "user.created starts an onboarding");
    }

    @Test
    void load_reads_conf_taskline_json_from_the_working_directory() {
        TasklineConfig config = ConfigLoader.load(Map.of());
        assertEquals(1000, config.queue("matching").capacity());
    }

    @Test
    void load_reads_the_file_named_by_TASKLINE_CONFIG_and_still_applies_the_environment(@TempDir Path dir)
            throws Exception {
        Path file = dir.resolve("node.json");
        Files.writeString(file, "{\"queues\":{\"only-here\":{\"capacity\":7}}}");
        TasklineConfig config =
                ConfigLoader.load(Map.of(ConfigLoader.ENV_CONFIG, file.toString(), ConfigLoader.ENV_HTTP_PORT, "0"));
        assertEquals(7, config.queue("only-here").capacity());
        assertEquals(0, config.http().port());
    }

    static Stream<Arguments> badConfigs() {
        return Stream.of(
                Arguments.of("unknown top-level key", "{\"htpp\":{}}", Map.of(), "htpp"),
                Arguments.of("unknown http key", "{\"http\":{\"prot\":1}}", Map.of(), "http.prot"),
                Arguments.of(
                        "unknown queue key",
                        "{\"queues\":{\"default\":{\"slot\":2}}}",
                        Map.of(),
                        "queues.default.slot"),
                Arguments.of("slots 0", "{\"queues\":{\"default\":{\"slots\":0}}}", Map.of(), "queues.default.slots"),
                Arguments.of(
                        "capacity -1",
                        "{\"queues\":{\"default\":{\"capacity\":-1}}}",
                        Map.of(),
                        "queues.default.capacity"),
                Arguments.of(
                        "tenantLimit -1",
                        "{\"queues\":{\"default\":{\"tenantLimit\":-1}}}",
                        Map.of(),
                        "queues.default.tenantLimit"),
                Arguments.of(
                        "claimAhead -1",
                        "{\"queues\":{\"default\":{\"claimAhead\":-1}}}",
                        Map.of(),
                        "queues.default.claimAhead"),
                Arguments.of(
                        "tenantWeights 0",
                        "{\"queues\":{\"default\":{\"tenantWeights\":{\"acme\":0}}}}",
                        Map.of(),
                        "queues.default.tenantWeights.acme"),
                Arguments.of(
                        "fairTenants not a boolean",
                        "{\"queues\":{\"default\":{\"fairTenants\":\"yes\"}}}",
                        Map.of(),
                        "queues.default.fairTenants"),
                Arguments.of(
                        "rateLimit tasks 0",
                        "{\"queues\":{\"default\":{\"rateLimit\":{\"tasks\":0,\"perMs\":1000}}}}",
                        Map.of(),
                        "queues.default.rateLimit.tasks"),
                Arguments.of(
                        "rateLimit tasks negative",
                        "{\"queues\":{\"default\":{\"rateLimit\":{\"tasks\":-1,\"perMs\":1000}}}}",
                        Map.of(),
                        "queues.default.rateLimit.tasks"),
                Arguments.of(
                        "rateLimit perMs below 10",
                        "{\"queues\":{\"default\":{\"rateLimit\":{\"tasks\":5,\"perMs\":9}}}}",
                        Map.of(),
                        "queues.default.rateLimit.perMs"),
                Arguments.of(
                        "rateLimit perMs missing",
                        "{\"queues\":{\"default\":{\"rateLimit\":{\"tasks\":5}}}}",
                        Map.of(),
                        "queues.default.rateLimit.perMs"),
                Arguments.of(
                        "rateLimit unknown key",
                        "{\"queues\":{\"default\":{\"rateLimit\":{\"tasks\":5,\"perMs\":100,\"burst\":2}}}}",
                        Map.of(),
                        "queues.default.rateLimit.burst"),
                Arguments.of(
                        "rateLimit perKey not a boolean",
                        "{\"queues\":{\"default\":{\"rateLimit\":{\"tasks\":5,\"perMs\":100,\"perKey\":1}}}}",
                        Map.of(),
                        "queues.default.rateLimit.perKey"),
                Arguments.of(
                        "rateLimit not an object",
                        "{\"queues\":{\"default\":{\"rateLimit\":100}}}",
                        Map.of(),
                        "queues.default.rateLimit"),
                Arguments.of(
                        "keyConcurrency 0",
                        "{\"queues\":{\"default\":{\"keyConcurrency\":0}}}",
                        Map.of(),
                        "queues.default.keyConcurrency"),
                Arguments.of(
                        "keyConcurrency -2",
                        "{\"queues\":{\"default\":{\"keyConcurrency\":-2}}}",
                        Map.of(),
                        "queues.default.keyConcurrency"),
                Arguments.of(
                        "keyLimits 0",
                        "{\"queues\":{\"default\":{\"keyLimits\":{\"m\":0}}}}",
                        Map.of(),
                        "queues.default.keyLimits.m"),
                Arguments.of(
                        "keyLimits not a number",
                        "{\"queues\":{\"default\":{\"keyLimits\":{\"m\":\"two\"}}}}",
                        Map.of(),
                        "queues.default.keyLimits.m"),
                Arguments.of(
                        "keyLimits key too long",
                        "{\"queues\":{\"default\":{\"keyLimits\":{\"" + "k".repeat(129) + "\":2}}}}",
                        Map.of(),
                        "queues.default.keyLimits"),
                Arguments.of(
                        "heartbeat over half the lease",
                        "{\"queues\":{\"default\":{\"leaseMs\":1000,\"heartbeatMs\":501}}}",
                        Map.of(),
                        "queues.default.heartbeatMs"),
                Arguments.of(
                        "heartbeat so large that doubling it overflows",
                        "{\"queues\":{\"default\":{\"leaseMs\":1000,\"heartbeatMs\":4611686018427387904}}}",
                        Map.of(),
                        "queues.default.heartbeatMs"),
                Arguments.of(
                        "queue settings not an object", "{\"queues\":{\"default\":5}}", Map.of(), "queues.default"),
                Arguments.of("bad queue name", "{\"queues\":{\"a b\":{}}}", Map.of(), "a b"),
                Arguments.of("port as string", "{\"http\":{\"port\":\"8080\"}}", Map.of(), "http.port"),
                Arguments.of("port as fraction", "{\"http\":{\"port\":80.5}}", Map.of(), "http.port"),
                Arguments.of("port out of range", "{\"http\":{\"port\":70000}}", Map.of(), "http.port"),
                Arguments.of("host as number", "{\"http\":{\"host\":1}}", Map.of(), "http.host"),
                Arguments.of(
                        "TASKLINE_HTTP_PORT=abc",
                        "{}",
                        Map.of(ConfigLoader.ENV_HTTP_PORT, "abc"),
                        "TASKLINE_HTTP_PORT"),
                Arguments.of(
                        "pgUrl of another database",
                        "{\"journal\":{\"pgUrl\":\"mysql://u:p@localhost/db\"}}",
                        Map.of(),
                        "journal.pgUrl"),
                Arguments.of(
                        "TASKLINE_PG_URL of another database",
                        "{}",
                        Map.of(ConfigLoader.ENV_PG_URL, "jdbc:postgresql://localhost/db"),
                        "TASKLINE_PG_URL"),
                Arguments.of(
                        "a body bound the JSON decoder could not read back",
                        "{\"http\":{\"bodyLimitBytes\":16777217}}",
                        Map.of(),
                        "http.bodyLimitBytes"),
                Arguments.of(
                        "a statement timeout that would cancel the node's own statements",
                        "{\"journal\":{\"statementTimeoutMs\":50}}",
                        Map.of(),
                        "journal.statementTimeoutMs"),
                Arguments.of(
                        "a negative lock timeout",
                        "{\"journal\":{\"lockTimeoutMs\":-1}}",
                        Map.of(),
                        "journal.lockTimeoutMs"),
                Arguments.of(
                        "a read replica of the embedded PostgreSQL",
                        "{}",
                        Map.of("TASKLINE_PG_READ_URL", "postgresql://u@127.0.0.1:5433/db"),
                        "journal.readUrl"),
                Arguments.of(
                        "a read replica that is no URL",
                        "{\"journal\":{\"pgUrl\":\"postgresql://u@h/db\",\"readUrl\":\"h:5432\"}}",
                        Map.of(),
                        "journal.readUrl"),
                Arguments.of("invalid JSON", "{\"http\": {", Map.of(), "JSON"),
                Arguments.of("section not an object", "{\"http\":[]}", Map.of(), "http"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("badConfigs")
    void a_bad_config_fails_with_a_message_that_names_the_key(
            String why, String json, Map<String, String> env, String key) {
        ConfigException e = assertThrows(ConfigException.class, () -> ConfigLoader.fromJson(json, env));
        assertTrue(e.getMessage().contains(key), "'" + e.getMessage() + "' should name " + key);
    }

    @Test
    void TASKLINE_CONFIG_naming_a_missing_file_fails_and_names_the_variable(@TempDir Path dir) {
        String missing = dir.resolve("missing.json").toString();
        ConfigException e =
                assertThrows(ConfigException.class, () -> ConfigLoader.load(Map.of(ConfigLoader.ENV_CONFIG, missing)));
        assertTrue(e.getMessage().contains(ConfigLoader.ENV_CONFIG), e.getMessage());
        assertTrue(e.getMessage().contains(missing), e.getMessage());
    }

    @Test
    void a_config_that_is_not_a_json_object_is_refused() {
        // Otherwise a file holding an array or a number would silently start a node on the defaults,
        // which is the very mistake refusing unknown keys is meant to catch.
        assertThrows(ConfigException.class, () -> ConfigLoader.fromJson("[{\"http\":{\"port\":9000}}]", Map.of()));
        assertThrows(ConfigException.class, () -> ConfigLoader.fromJson("42", Map.of()));
    }

    @Test
    void a_node_reachable_from_other_machines_needs_keys_or_says_anonymous_on_purpose() {
        ConfigException refused = org.junit.jupiter.api.Assertions.assertThrows(
                ConfigException.class, () -> ConfigLoader.fromJson("{\"http\":{\"host\":\"0.0.0.0\"}}", Map.of()));
        assertTrue(refused.getMessage().contains("new-key"), refused.getMessage());
        assertTrue(
                ConfigLoader.fromJson("{\"http\":{\"host\":\"0.0.0.0\"},\"auth\":{\"allowAnonymous\":true}}", Map.of())
                        .auth()
                        .allowAnonymous());
        String key = "{\"id\":\"ci\",\"hash\":\"sha256:" + "a".repeat(64) + "\",\"scopes\":[\"read\"]}";
        assertTrue(
                ConfigLoader.fromJson("{\"http\":{\"host\":\"0.0.0.0\"},\"auth\":{\"keys\":[" + key + "]}}", Map.of())
                        .auth()
                        .enabled());
        assertTrue(ConfigLoader.fromJson("{\"http\":{\"host\":\"localhost\"}}", Map.of())
                .http()
                .host()
                .equals("localhost"));
    }

    @Test
    void a_host_counts_as_local_only_when_every_address_it_resolves_to_is_a_loopback_one() {
        for (String local : new String[] {"127.0.0.1", "127.0.0.2", "localhost", "::1", "[::1]"}) {
            assertTrue(TasklineConfig.loopback(local), local);
        }
        // Looks local, is a name: it points wherever its zone says, or nowhere.
        for (String other : new String[] {"127.example.net", "127.0.0.1.example.net", "0.0.0.0", "10.0.0.1", "::"}) {
            org.junit.jupiter.api.Assertions.assertFalse(TasklineConfig.loopback(other), other);
        }
        org.junit.jupiter.api.Assertions.assertThrows(
                ConfigException.class,
                () -> ConfigLoader.fromJson("{\"http\":{\"host\":\"127.example.net\"}}", Map.of()));
    }

    @Test
    void bad_keys_are_refused_by_name() {
        for (String[] c : new String[][] {
            {"{\"id\":\"ci\",\"hash\":\"md5:abc\",\"scopes\":[\"read\"]}", "hash"},
            {"{\"id\":\"ci\",\"hash\":\"sha256:" + "a".repeat(64) + "\",\"scopes\":[\"root\"]}", "scopes"},
            {"{\"id\":\"ci\",\"hash\":\"sha256:" + "a".repeat(64) + "\",\"scopes\":[]}", "scopes"},
            {"{\"id\":\"c i\",\"hash\":\"sha256:" + "a".repeat(64) + "\",\"scopes\":[\"read\"]}", "id"},
            {
                "{\"id\":\"ci\",\"hash\":\"sha256:" + "a".repeat(64) + "\",\"tenant\":\"t\",\"scopes\":[\"admin\"]}",
                "admin"
            },
            {
                "{\"id\":\"ci\",\"hash\":\"sha256:" + "a".repeat(64) + "\",\"scopes\":[\"read\"],\"secret\":\"x\"}",
                "secret"
            }
        }) {
            ConfigException e = org.junit.jupiter.api.Assertions.assertThrows(
                    ConfigException.class,
                    () -> ConfigLoader.fromJson("{\"auth\":{\"keys\":[" + c[0] + "]}}", Map.of()),
                    c[0]);
            assertTrue(e.getMessage().contains(c[1]), e.getMessage());
        }
    }

    @Test
    void statements_in_flight_default_to_one_on_a_small_machine_and_grow_with_its_cores_to_four() {
        int[][] cases = {{1, 1}, {2, 1}, {4, 1}, {7, 1}, {8, 2}, {12, 3}, {16, 4}, {64, 4}};
        for (int[] c : cases) {
            assertEquals(c[1], TasklineConfig.Journal.defaultStatementsInFlight(c[0]), c[0] + " cores");
        }
    }

    @Test
    void statements_in_flight_set_in_the_config_win_over_the_machines_default(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("inflight.json");
        Files.writeString(file, "{\"journal\": {\"statementsInFlight\": 6}}");
        assertEquals(
                6,
                ConfigLoader.load(Map.of(ConfigLoader.ENV_CONFIG, file.toString()))
                        .journal()
                        .statementsInFlight());
    }

    @Test
    void the_journals_units_are_a_day_by_default_and_few_enough_to_plan() {
        TasklineConfig.Retention retention =
                ConfigLoader.fromJson("{}", Map.of()).retention();
        assertEquals(86_400_000L, retention.partitionIntervalMs());
        assertEquals(false, retention.archive());
        TasklineConfig.Retention hourly = ConfigLoader.fromJson(
                        "{\"retention\": {\"partitionIntervalMs\": 3600000, \"archive\": true}}", Map.of())
                .retention();
        assertEquals(3_600_000L, hourly.partitionIntervalMs());
        assertEquals(true, hourly.archive());
        // A year's retention in units of a day: 365, fewer than 400.
        ConfigLoader.fromJson(
                "{\"retention\": {\"finishedTaskTtlMs\": 31536000000, \"partitionIntervalMs\": 86400000}}", Map.of());
        ConfigException many = assertThrows(
                ConfigException.class,
                () -> ConfigLoader.fromJson(
                        "{\"retention\": {\"finishedTaskTtlMs\": 31536000000, \"partitionIntervalMs\": 3600000}}",
                        Map.of()));
        assertTrue(many.getMessage().contains("partitionIntervalMs"), many.getMessage());
        assertThrows(
                ConfigException.class,
                () -> ConfigLoader.fromJson("{\"retention\": {\"partitionIntervalMs\": 59999}}", Map.of()));
    }
}
