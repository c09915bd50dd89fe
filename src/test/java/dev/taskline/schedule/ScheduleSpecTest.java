package dev.taskline.schedule;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.taskline.model.problem.InvalidScheduleException;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** Reading definitions: fields, defaults, and what the journal keeps. */
class ScheduleSpecTest {

    private static JsonObject base() {
        return new JsonObject()
                .put("name", "nightly")
                .put("cron", "0 3 * * *")
                .put("timezone", "Europe/Paris")
                .put("task", new JsonObject().put("type", "report").put("payload", new JsonObject().put("k", 1)));
    }

    @Test
    void defaults_are_filled_in_and_kept_so_that_every_node_reads_the_same_schedule() {
        ScheduleSpec spec = ScheduleSpec.parse(base(), null);
        assertEquals(ScheduleSpec.Overlap.ALLOW, spec.overlap());
        assertEquals(ScheduleSpec.CatchUp.LATEST, spec.catchUp());
        JsonObject stored = spec.stored();
        assertEquals(
                new JsonObject()
                        .put("cron", "0 3 * * *")
                        .put("timezone", "Europe/Paris")
                        .put("task", base().getJsonObject("task"))
                        .put("overlap", "allow")
                        .put("catchUp", "latest"),
                stored);
        assertEquals(spec.stored(), ScheduleSpec.fromStored("nightly", stored).stored());
        ScheduleSpec every =
                ScheduleSpec.parse(base().put("every", "PT90S").putNull("cron").putNull("timezone"), null);
        assertEquals(Duration.ofSeconds(90), every.every());
        assertEquals("UTC", every.zone().getId());
    }

    @Test
    void a_config_key_names_the_schedule_and_a_name_in_the_body_must_agree() {
        assertEquals(
                "fromKey",
                ScheduleSpec.parse(base().copy().put("name", null), "fromKey").name());
        InvalidScheduleException e =
                assertThrows(InvalidScheduleException.class, () -> ScheduleSpec.parse(base(), "other"));
        assertTrue(e.getMessage().startsWith("name: 'nightly' differs"), e.getMessage());
    }

    @Test
    void bad_fields_are_named() {
        assertMessage(base().put("task", "report"), "task must be an object");
        assertMessage(
                base().put("task", new JsonObject().put("type", "x").put("runAt", "2026-12-01T00:00:00Z")),
                "task.runAt cannot be given");
        assertMessage(
                base().put("task", new JsonObject().put("type", "x").put("startBy", "2026-12-01T00:00:00Z")),
                "task.startBy cannot be given");
        assertMessage(base().put("task", new JsonObject()), "task.type must be");
        assertMessage(base().put("every", "PT1S"), "give cron or every");
        assertMessage(base().putNull("cron"), "give cron or every");
        assertMessage(base().put("cron", 5), "cron must be a non-empty string");
        JsonObject every = base().putNull("cron").putNull("timezone");
        assertMessage(every.copy().put("every", "PT0.999S"), "at least one second");
        assertMessage(every.copy().put("every", "-PT5S"), "at least one second");
        assertMessage(every.copy().put("every", "P400D"), "at most 366 days");
        assertMessage(
                every.copy().put("every", "P1D").put("timezone", "Europe/Paris"), "timezone applies to cron only");
        assertMessage(base().put("timezone", "Europe/Atlantis"), "timezone: 'Europe/Atlantis' is not a time zone");
        assertMessage(base().put("name", ""), "name must be");
    }

    private static void assertMessage(JsonObject json, String start) {
        InvalidScheduleException e = assertThrows(InvalidScheduleException.class, () -> ScheduleSpec.parse(json, null));
        assertTrue(e.getMessage().contains(start), "'" + start + "' not in: " + e.getMessage());
    }
}
