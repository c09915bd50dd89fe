package dev.taskline.schedule;

import dev.taskline.admission.Submission;
import dev.taskline.admission.SubmissionJson;
import dev.taskline.model.problem.InvalidScheduleException;
import dev.taskline.model.problem.InvalidTaskException;
import io.vertx.core.json.JsonObject;
import java.time.DateTimeException;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * A schedule's definition, as the API or a config gave it, read and checked: its name, its
 * cadence (cron or every, in a time zone), the task each tick makes, and what happens to a tick
 * while the last one's task is unfinished ({@link Overlap}) or to ticks no node was there for
 * ({@link CatchUp}). It never changes once made: {@link #stored} is what the journal keeps, with
 * every default filled in, so that nodes of other versions read the same schedule.
 */
public record ScheduleSpec(
        String name,
        String cron,
        Duration every,
        ZoneId zone,
        JsonObject taskJson,
        Submission task,
        Overlap overlap,
        CatchUp catchUp,
        Cadence cadence) {

    public static final Duration MIN_EVERY = Duration.ofSeconds(1);
    public static final Duration MAX_EVERY = Duration.ofDays(366);
    static final Pattern NAME = Pattern.compile("[A-Za-z0-9._:-]{1,128}");
    private static final Set<String> FIELDS = Set.of("name", "cron", "every", "timezone", "task", "overlap", "catchUp");
    // A tick is the time the task is due and its deadline counts from it: a template says neither.
    private static final Set<String> NOT_IN_TASK = Set.of("delayMs", "runAt", "startBy");

    /** A tick whose last task has not finished yet: {@code SKIP} skips it (recorded), {@code ALLOW} fires it. */
    public enum Overlap {
        SKIP,
        ALLOW;

        public String label() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    /**
     * Ticks that came while no node evaluated the schedule (every node down, say): {@code NONE} fires
     * none of them, {@code LATEST} the newest, {@code ALL} each, oldest first (up to the scheduler's
     * {@code maxCatchUp} newest). Those not fired are recorded as missed.
     */
    public enum CatchUp {
        NONE,
        LATEST,
        ALL;

        public String label() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    /** Reads a definition; {@code name} comes from the body ({@code null}) or from the config's key. */
    public static ScheduleSpec parse(JsonObject json, String name) {
        knownFields(json);
        Object givenName = json.getValue("name");
        if (name == null) {
            if (!(givenName instanceof String text) || !NAME.matcher(text).matches()) {
                throw new InvalidScheduleException("name must be 1 to 128 letters, digits, '.', '_', ':' or '-'");
            }
            name = text;
        } else if (givenName != null && !name.equals(givenName)) {
            throw new InvalidScheduleException(
                    "name: '" + givenName + "' differs from the schedule's key '" + name + "'");
        } else if (!NAME.matcher(name).matches()) {
            throw new InvalidScheduleException("name must be 1 to 128 letters, digits, '.', '_', ':' or '-'");
        }
        String cron = text(json, "cron");
        String everyText = text(json, "every");
        if ((cron == null) == (everyText == null)) {
            throw new InvalidScheduleException("give cron or every, one of them");
        }
        if (everyText != null && json.getValue("timezone") != null) {
            // Silently ignored, a zone would read as if P1D fired at midnight there: it fires at 00:00 UTC.
            throw new InvalidScheduleException("timezone applies to cron only: every counts its multiples from the Unix"
                    + " epoch, in UTC (for a time of day in a zone, use cron)");
        }
        ZoneId zone = zone(json);
        Duration every = null;
        Cadence cadence;
        if (cron != null) {
            try {
                cadence = new Cadence.CronCadence(cron, zone);
            } catch (IllegalArgumentException e) {
                throw new InvalidScheduleException("cron: '" + cron + "' cannot be read: " + e.getMessage());
            }
        } else {
            every = every(everyText);
            cadence = new Cadence.Every(every);
        }
        JsonObject taskJson = task(json);
        Submission task;
        try {
            task = SubmissionJson.task(taskJson, "task.");
        } catch (InvalidTaskException e) {
            throw new InvalidScheduleException(e.getMessage());
        }
        ScheduleSpec spec = new ScheduleSpec(
                name,
                cron,
                every,
                zone,
                taskJson,
                task,
                choice(json, "overlap", Overlap.values(), Overlap.ALLOW),
                choice(json, "catchUp", CatchUp.values(), CatchUp.LATEST),
                cadence);
        return spec;
    }

    /** Reads back what {@link #stored} wrote. */
    public static ScheduleSpec fromStored(String name, JsonObject stored) {
        return parse(stored, name);
    }

    /** The definition as the journal keeps it: every field given, defaults filled in, no name (the row has it). */
    public JsonObject stored() {
        JsonObject json = new JsonObject();
        if (cron != null) {
            json.put("cron", cron).put("timezone", zone.getId());
        } else {
            json.put("every", every.toString());
        }
        return json.put("task", taskJson.copy()).put("overlap", overlap.label()).put("catchUp", catchUp.label());
    }

    /** The next {@code n} ticks after {@code after} (fewer when the cadence stops). */
    public List<Instant> nextTicks(Instant after, int n) {
        List<Instant> ticks = new ArrayList<>(n);
        Instant t = after;
        while (ticks.size() < n && (t = cadence.next(t)) != null) {
            ticks.add(t);
        }
        return ticks;
    }

    private static void knownFields(JsonObject json) {
        try {
            InvalidTaskException.unlessKnown(json, FIELDS, "");
        } catch (InvalidTaskException e) {
            throw new InvalidScheduleException(e.getMessage());
        }
    }

    private static String text(JsonObject json, String field) {
        Object value = json.getValue(field);
        if (value == null) {
            return null;
        }
        if (!(value instanceof String text) || text.isBlank() || text.length() > 200) {
            throw new InvalidScheduleException(field + " must be a non-empty string of at most 200 characters");
        }
        return text;
    }

    private static ZoneId zone(JsonObject json) {
        String zone = text(json, "timezone");
        if (zone == null) {
            return ZoneId.of("UTC");
        }
        try {
            return ZoneId.of(zone);
        } catch (DateTimeException e) {
            throw new InvalidScheduleException("timezone: '" + zone + "' is not a time zone (an IANA name such as"
                    + " Europe/Paris or America/New_York, or UTC)");
        }
    }

    private static Duration every(String text) {
        Duration every;
        try {
            every = Duration.parse(text);
        } catch (DateTimeParseException e) {
            throw new InvalidScheduleException("every: '" + text + "' is not an ISO-8601 duration of days, hours,"
                    + " minutes and seconds, such as PT30S, PT5M or P1D (for months, use cron)");
        }
        if (every.compareTo(MIN_EVERY) < 0) {
            throw new InvalidScheduleException("every must be at least one second (PT1S), got " + text);
        }
        if (every.compareTo(MAX_EVERY) > 0) {
            throw new InvalidScheduleException("every must be at most " + MAX_EVERY.toDays() + " days, got " + text);
        }
        return every;
    }

    private static JsonObject task(JsonObject json) {
        Object task = json.getValue("task");
        if (!(task instanceof JsonObject object)) {
            throw new InvalidScheduleException("task must be an object: the task each tick submits ({\"type\": ...})");
        }
        for (String field : NOT_IN_TASK) {
            if (object.containsKey(field)) {
                throw new InvalidScheduleException(
                        "task." + field + " cannot be given: a scheduled task is due at its tick"
                                + " (a deadline can be given as startWithinMs)");
            }
        }
        return object;
    }

    private static <E extends Enum<E>> E choice(JsonObject json, String field, E[] values, E fallback) {
        Object value = json.getValue(field);
        if (value == null) {
            return fallback;
        }
        List<String> labels = new ArrayList<>();
        for (E e : values) {
            String label = e.name().toLowerCase(Locale.ROOT);
            labels.add(label);
            if (label.equals(value)) {
                return e;
            }
        }
        throw new InvalidScheduleException(field + " must be one of " + String.join(", ", labels) + ", got " + value);
    }
}
