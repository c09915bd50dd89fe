package dev.taskline.handler;

import static java.util.concurrent.TimeUnit.SECONDS;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.ExecutionException;
import java.util.function.Consumer;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class QualificationMatchHandlerTest {

    // --- builders -------------------------------------------------------------------------------

    private static JsonObject qual(String name, int level) {
        return new JsonObject().put("name", name).put("level", level);
    }

    private static JsonObject qual(String name, int level, String expires) {
        return qual(name, level).put("expires", expires);
    }

    private static JsonObject req(String name, int minLevel, Number weight, boolean mandatory) {
        return new JsonObject()
                .put("name", name)
                .put("minLevel", minLevel)
                .put("weight", weight)
                .put("mandatory", mandatory);
    }

    private static JsonObject payload(JsonArray qualifications, JsonArray requirements) {
        return new JsonObject()
                .put("company", new JsonObject().put("name", "Acme").put("qualifications", qualifications))
                .put("project", new JsonObject().put("name", "Portal").put("requirements", requirements));
    }

    private static JsonObject score(JsonObject payload) throws InvalidPayloadException {
        return QualificationMatchHandler.score(payload);
    }

    private static JsonObject entry(JsonObject result, int index) {
        return result.getJsonArray("breakdown").getJsonObject(index);
    }

    private static JsonObject validPayload() {
        return payload(
                        new JsonArray().add(qual("ISO 27001", 3, "2027-05-01")).add(qual("ISO 9001", 1)),
                        new JsonArray().add(req("ISO 27001", 2, 3, true)).add(req("ISO 9001", 2, 1, false)))
                .put("asOf", "2026-11-29");
    }

    // --- scoring --------------------------------------------------------------------------------

    @Test
    void full_match_scores_100_and_meets_mandatory_requirements() throws Exception {
        JsonObject result = score(payload(
                new JsonArray().add(qual("ISO 27001", 3)).add(qual("ISO 9001", 2)),
                new JsonArray().add(req("ISO 27001", 2, 3, true)).add(req("ISO 9001", 1, 1, false))));

        assertEquals("Acme", result.getString("company"));
        assertEquals("Portal", result.getString("project"));
        assertEquals(100, result.getInteger("score"));
        assertTrue(result.getBoolean("mandatoryMet"));
        JsonObject first = entry(result, 0);
        assertEquals("ISO 27001", first.getString("requirement"));
        assertEquals(3, first.getInteger("weight"));
        assertTrue(first.getBoolean("mandatory"));
        assertEquals(2, first.getInteger("required"));
        assertEquals(3, first.getInteger("held"));
        assertFalse(first.getBoolean("expired"));
        assertEquals(1.0, first.getDouble("credit"));
        assertEquals("met", first.getString("status"));
    }

    @Test
    void missing_mandatory_requirement_fails_mandatory_check() throws Exception {
        JsonObject result = score(payload(
                new JsonArray().add(qual("ISO 9001", 2)),
                new JsonArray().add(req("ISO 27001", 2, 1, true)).add(req("ISO 9001", 1, 1, false))));

        assertFalse(result.getBoolean("mandatoryMet"));
        assertEquals(50, result.getInteger("score"));
        JsonObject missing = entry(result, 0);
        assertEquals("missing", missing.getString("status"));
        assertNull(missing.getValue("held"));
        assertTrue(missing.containsKey("held"), "held is present as null, not omitted");
        assertEquals(0.0, missing.getDouble("credit"));
    }

    @Test
    void level_below_minimum_earns_partial_credit_and_fails_mandatory_check() throws Exception {
        JsonObject result = score(
                payload(new JsonArray().add(qual("ISO 27001", 1)), new JsonArray().add(req("ISO 27001", 2, 1, true))));

        assertEquals(50, result.getInteger("score"));
        assertFalse(result.getBoolean("mandatoryMet"));
        assertEquals("partial", entry(result, 0).getString("status"));
        assertEquals(0.5, entry(result, 0).getDouble("credit"));
        assertEquals(1, entry(result, 0).getInteger("held"));
    }

    @Test
    void partial_credit_is_rounded_to_three_decimals_but_score_uses_exact_credit() throws Exception {
        // credits 2/3 and 1: 100 * (2/3 + 1) / 2 = 83.33 -> 83
        JsonObject result = score(payload(
                new JsonArray().add(qual("A", 2)).add(qual("B", 5)),
                new JsonArray().add(req("A", 3, 1, false)).add(req("B", 5, 1, false))));

        assertEquals(0.667, entry(result, 0).getDouble("credit"));
        assertEquals(83, result.getInteger("score"));
    }

    @Test
    void score_is_rounded_half_up() throws Exception {
        // 100 * (1 + 0.5 + 0 + 0) / 4 = 37.5 -> 38
        JsonObject result = score(payload(
                new JsonArray().add(qual("A", 1)).add(qual("B", 1)),
                new JsonArray()
                        .add(req("A", 1, 1, false))
                        .add(req("B", 2, 1, false))
                        .add(req("C", 1, 1, false))
                        .add(req("D", 1, 1, false))));

        assertEquals(38, result.getInteger("score"));
    }

    @Test
    void expired_qualification_earns_no_credit_when_as_of_is_given() throws Exception {
        JsonObject result = score(payload(
                        new JsonArray().add(qual("ISO 27001", 3, "2026-11-28")),
                        new JsonArray().add(req("ISO 27001", 2, 1, true)))
                .put("asOf", "2026-11-29"));

        assertEquals(0, result.getInteger("score"));
        assertFalse(result.getBoolean("mandatoryMet"));
        JsonObject e = entry(result, 0);
        assertEquals("expired", e.getString("status"));
        assertTrue(e.getBoolean("expired"));
        assertEquals(3, e.getInteger("held"));
        assertEquals(0.0, e.getDouble("credit"));
    }

    @Test
    void qualification_expiring_on_the_as_of_date_still_counts() throws Exception {
        JsonObject result = score(payload(
                        new JsonArray().add(qual("ISO 27001", 3, "2026-11-29")),
                        new JsonArray().add(req("ISO 27001", 2, 1, true)))
                .put("asOf", "2026-11-29"));

        assertEquals(100, result.getInteger("score"));
        assertEquals("met", entry(result, 0).getString("status"));
    }

    @Test
    void expiry_is_ignored_without_as_of() throws Exception {
        JsonObject result = score(payload(
                new JsonArray().add(qual("ISO 27001", 3, "1999-01-01")),
                new JsonArray().add(req("ISO 27001", 2, 1, true))));

        assertEquals(100, result.getInteger("score"));
        assertFalse(entry(result, 0).getBoolean("expired"));
    }

    @Test
    void unexpired_listing_is_preferred_over_a_higher_expired_one() throws Exception {
        JsonObject result = score(payload(
                        new JsonArray().add(qual("ISO 27001", 5, "2020-01-01")).add(qual("ISO 27001", 1)),
                        new JsonArray().add(req("ISO 27001", 2, 1, false)))
                .put("asOf", "2026-11-29"));

        assertEquals("partial", entry(result, 0).getString("status"));
        assertEquals(1, entry(result, 0).getInteger("held"));
        assertEquals(50, result.getInteger("score"));
    }

    @Test
    void names_match_case_insensitively_after_trimming() throws Exception {
        JsonObject result = score(payload(
                new JsonArray().add(qual("  iso 27001 ", 2)), new JsonArray().add(req("ISO 27001", 2, 1, true))));

        assertEquals(100, result.getInteger("score"));
        assertEquals("ISO 27001", entry(result, 0).getString("requirement"));
    }

    @Test
    void weights_scale_each_requirements_contribution() throws Exception {
        // 100 * (3 * 1 + 1 * 0) / 4 = 75
        JsonObject result = score(payload(
                new JsonArray().add(qual("A", 1)),
                new JsonArray().add(req("A", 1, 3, false)).add(req("B", 1, 1, false))));
        assertEquals(75, result.getInteger("score"));

        // fractional weights: 100 * 0.1 / (0.1 + 0.2) = 33.3 -> 33
        JsonObject fractional = score(payload(
                new JsonArray().add(qual("A", 1)),
                new JsonArray().add(req("A", 1, 0.1, false)).add(req("B", 1, 0.2, false))));
        assertEquals(33, fractional.getInteger("score"));
        assertEquals(0.1, entry(fractional, 0).getDouble("weight"));
    }

    @Test
    void defaults_are_min_level_1_weight_1_and_not_mandatory() throws Exception {
        JsonObject result = score(payload(
                new JsonArray().add(qual("A", 1)),
                new JsonArray().add(new JsonObject().put("name", "A")).add(new JsonObject().put("name", "B"))));

        assertEquals(50, result.getInteger("score"));
        assertTrue(result.getBoolean("mandatoryMet"));
        JsonObject a = entry(result, 0);
        assertEquals(1, a.getInteger("required"));
        assertEquals(1, a.getInteger("weight"));
        assertFalse(a.getBoolean("mandatory"));
    }

    @Test
    void project_without_requirements_scores_100() throws Exception {
        JsonObject result = score(payload(new JsonArray().add(qual("A", 1)), new JsonArray()));

        assertEquals(100, result.getInteger("score"));
        assertTrue(result.getBoolean("mandatoryMet"));
        assertTrue(result.getJsonArray("breakdown").isEmpty());
    }

    @Test
    void breakdown_follows_requirement_order() throws Exception {
        JsonObject result = score(payload(
                new JsonArray(),
                new JsonArray()
                        .add(req("Z", 1, 1, false))
                        .add(req("A", 1, 1, false))
                        .add(req("M", 1, 1, false))));

        assertEquals(
                List.of("Z", "A", "M"),
                result.getJsonArray("breakdown").stream()
                        .map(o -> ((JsonObject) o).getString("requirement"))
                        .toList());
    }

    @Test
    void same_payload_gives_the_same_result() throws Exception {
        JsonObject payload = validPayload();
        JsonObject first = score(payload);
        for (int i = 0; i < 20; i++) {
            assertEquals(first.encode(), score(payload.copy()).encode());
        }
    }

    // --- validation -----------------------------------------------------------------------------

    private static Arguments bad(String expectedInMessage, Consumer<JsonObject> breakIt) {
        return Arguments.of(expectedInMessage, breakIt);
    }

    private static JsonObject company(JsonObject p) {
        return p.getJsonObject("company");
    }

    private static JsonObject project(JsonObject p) {
        return p.getJsonObject("project");
    }

    static Stream<Arguments> badPayloads() {
        JsonArray tooMany = new JsonArray();
        for (int i = 0; i <= QualificationMatchHandler.MAX_ENTRIES; i++) {
            tooMany.add(new JsonObject().put("name", "R" + i));
        }
        return Stream.of(
                bad("company", p -> p.remove("company")),
                bad("company", p -> p.put("company", "Acme")),
                bad("project", p -> p.remove("project")),
                bad("company.name", p -> company(p).remove("name")),
                bad("company.name", p -> company(p).put("name", 42)),
                bad("project.name", p -> project(p).put("name", "  ")),
                bad("company.qualifications", p -> company(p).remove("qualifications")),
                bad("company.qualifications", p -> company(p).put("qualifications", "ISO 27001")),
                bad("project.requirements", p -> project(p).put("requirements", new JsonObject())),
                bad(
                        "company.qualifications[1]",
                        p -> company(p).getJsonArray("qualifications").set(1, "ISO 9001")),
                bad(
                        "company.qualifications[0].name",
                        p -> company(p)
                                .getJsonArray("qualifications")
                                .getJsonObject(0)
                                .remove("name")),
                bad(
                        "company.qualifications[1].level",
                        p -> company(p)
                                .getJsonArray("qualifications")
                                .getJsonObject(1)
                                .remove("level")),
                bad(
                        "company.qualifications[0].level",
                        p -> company(p)
                                .getJsonArray("qualifications")
                                .getJsonObject(0)
                                .put("level", 11)),
                bad(
                        "company.qualifications[0].level",
                        p -> company(p)
                                .getJsonArray("qualifications")
                                .getJsonObject(0)
                                .put("level", -1)),
                bad(
                        "company.qualifications[0].level",
                        p -> company(p)
                                .getJsonArray("qualifications")
                                .getJsonObject(0)
                                .put("level", 2.5)),
                bad(
                        "company.qualifications[0].level",
                        p -> company(p)
                                .getJsonArray("qualifications")
                                .getJsonObject(0)
                                .put("level", "3")),
                bad(
                        "company.qualifications[0].expires",
                        p -> company(p)
                                .getJsonArray("qualifications")
                                .getJsonObject(0)
                                .put("expires", "2027-02-30")),
                bad(
                        "company.qualifications[0].expires",
                        p -> company(p)
                                .getJsonArray("qualifications")
                                .getJsonObject(0)
                                .put("expires", "01/05/2027")),
                bad(
                        "project.requirements[1].name",
                        p -> project(p)
                                .getJsonArray("requirements")
                                .getJsonObject(1)
                                .put("name", true)),
                bad(
                        "project.requirements[1].minLevel",
                        p -> project(p)
                                .getJsonArray("requirements")
                                .getJsonObject(1)
                                .put("minLevel", 12)),
                bad(
                        "project.requirements[0].weight",
                        p -> project(p)
                                .getJsonArray("requirements")
                                .getJsonObject(0)
                                .put("weight", 0)),
                bad(
                        "project.requirements[0].weight",
                        p -> project(p)
                                .getJsonArray("requirements")
                                .getJsonObject(0)
                                .put("weight", -2.5)),
                bad(
                        "project.requirements[0].weight",
                        p -> project(p)
                                .getJsonArray("requirements")
                                .getJsonObject(0)
                                .put("weight", "3")),
                bad(
                        "project.requirements[0].mandatory",
                        p -> project(p)
                                .getJsonArray("requirements")
                                .getJsonObject(0)
                                .put("mandatory", "yes")),
                bad("project.requirements", p -> project(p).put("requirements", tooMany.copy())),
                bad("asOf", p -> p.put("asOf", "tomorrow")),
                bad("asOf", p -> p.put("asOf", 20261129)),
                bad("simulateMs", p -> p.put("simulateMs", -1)),
                bad("simulateMs", p -> p.put("simulateMs", 600_001)),
                bad("simulateMs", p -> p.put("simulateMs", 1.5)),
                bad("simulateMs", p -> p.put("simulateMs", "50")));
    }

    @ParameterizedTest(name = "[{index}] rejected, naming {0}")
    @MethodSource("badPayloads")
    void bad_payload_is_rejected_with_a_message_naming_the_field(String field, Consumer<JsonObject> breakIt) {
        JsonObject payload = validPayload();
        breakIt.accept(payload);

        InvalidPayloadException e =
                assertThrows(InvalidPayloadException.class, () -> new QualificationMatchHandler().validate(payload));
        assertTrue(
                e.getMessage().startsWith(field + " "),
                () -> "expected message to start with '" + field + " ' but was: " + e.getMessage());
    }

    @Test
    void valid_payload_passes_validation() throws Exception {
        new QualificationMatchHandler().validate(validPayload());
        new QualificationMatchHandler().validate(validPayload().put("simulateMs", 600_000));
    }

    @Test
    void null_payload_is_rejected() {
        assertThrows(InvalidPayloadException.class, () -> new QualificationMatchHandler().validate(null));
    }

    @Test
    void run_fails_with_illegal_argument_on_a_bad_payload() {
        JsonObject payload = validPayload().put("simulateMs", -5);
        RecordingContext context = new RecordingContext(null, payload);

        ExecutionException e = assertThrows(
                ExecutionException.class,
                () -> new QualificationMatchHandler()
                        .run(context)
                        .toCompletionStage()
                        .toCompletableFuture()
                        .get(10, SECONDS));
        assertInstanceOf(IllegalArgumentException.class, e.getCause());
        assertTrue(e.getCause().getMessage().startsWith("simulateMs "));
    }

    // --- running on Vert.x ----------------------------------------------------------------------

    @Test
    void run_reports_increasing_progress_and_delivers_the_result() throws Exception {
        Vertx vertx = Vertx.vertx();
        try {
            JsonObject payload = validPayload().put("simulateMs", 50);
            RecordingContext context = new RecordingContext(vertx, payload);

            JsonObject result = new QualificationMatchHandler()
                    .run(context)
                    .toCompletionStage()
                    .toCompletableFuture()
                    .get(10, SECONDS);

            assertEquals(score(validPayload()), result);
            List<Integer> percents = context.percents();
            assertTrue(percents.size() >= 2, "expected several progress reports: " + percents);
            for (int i = 1; i < percents.size(); i++) {
                assertTrue(percents.get(i) > percents.get(i - 1), "not increasing: " + percents);
            }
            assertEquals(100, percents.get(percents.size() - 1));
        } finally {
            vertx.close().toCompletionStage().toCompletableFuture().get(10, SECONDS);
        }
    }

    @Test
    void run_without_simulation_reports_100_once_and_completes_at_once() throws Exception {
        RecordingContext context = new RecordingContext(null, validPayload());

        var future = new QualificationMatchHandler().run(context);

        assertTrue(future.succeeded());
        assertEquals(score(validPayload()), future.result());
        assertEquals(List.of(100), context.percents());
    }

    /** Records progress; vertx may be null when the run is not expected to touch it. */
    private static final class RecordingContext implements TaskContext {
        private final UUID taskId = UUID.randomUUID();
        private final Vertx vertx;
        private final JsonObject payload;
        private final List<Integer> percents = new ArrayList<>();

        RecordingContext(Vertx vertx, JsonObject payload) {
            this.vertx = vertx;
            this.payload = payload;
        }

        @Override
        public UUID taskId() {
            return taskId;
        }

        @Override
        public int attempt() {
            return 1;
        }

        @Override
        public String type() {
            return "qualification-match";
        }

        @Override
        public long leaseVersion() {
            return 1;
        }

        @Override
        public JsonObject payload() {
            return payload;
        }

        @Override
        public Vertx vertx() {
            return vertx;
        }

        @Override
        public synchronized void progress(int percent, String message) {
            percents.add(percent);
        }

        @Override
        public boolean cancelled() {
            return false;
        }

        @Override
        public void onCancel(Runnable action) {}

        synchronized List<Integer> percents() {
            return List.copyOf(percents);
        }
    }
}
