package dev.taskline.model;

import dev.taskline.model.problem.InvalidTaskException;
import io.vertx.core.json.JsonObject;
import java.time.Instant;
import java.util.Set;

/**
 * A remote worker's or a push target's {@code suspend} (on complete, or in the target's answer): {@code {"step"?,
 * "until"? | "sleepMs"? | "signal"? | "event"?: {name, field, value}, "timeoutMs"?}}. A sleep's
 * step is named by default after its end, a wait's after what it waits for.
 */
public final class SuspendJson {

    private static final Set<String> FIELDS = Set.of("step", "until", "sleepMs", "signal", "event", "timeoutMs");
    private static final Set<String> EVENT_FIELDS = Set.of("name", "field", "value");

    private SuspendJson() {}

    public static Suspend parse(Object value) {
        if (!(value instanceof JsonObject json)) {
            throw new InvalidTaskException(
                    "suspend must be an object: {step?, until? | sleepMs? | signal? | event?," + " timeoutMs?}");
        }
        InvalidTaskException.unlessKnown(json, FIELDS, "suspend.");
        int kinds = (json.containsKey("until") || json.containsKey("sleepMs") ? 1 : 0)
                + (json.containsKey("signal") ? 1 : 0)
                + (json.containsKey("event") ? 1 : 0);
        if (kinds != 1 || (json.containsKey("until") && json.containsKey("sleepMs"))) {
            throw new InvalidTaskException("suspend must name one of until, sleepMs, signal or event");
        }
        String step = name(json, "step", false);
        Long timeoutMs = millis(json, "timeoutMs");
        if (json.containsKey("signal")) {
            String signal = name(json, "signal", true);
            return new Suspend(step == null ? signal : step, Wait.Kind.SIGNAL, signal, null, null, null, timeoutMs);
        }
        if (json.containsKey("event")) {
            if (!(json.getValue("event") instanceof JsonObject event)) {
                throw new InvalidTaskException("suspend.event must be {name, field, value}");
            }
            InvalidTaskException.unlessKnown(event, EVENT_FIELDS, "suspend.event.");
            String name = name(event, "name", true);
            String field = name(event, "field", true);
            if (!field.startsWith("data.") || field.length() <= "data.".length()) {
                throw new InvalidTaskException(
                        "suspend.event.field must be a path into the event's data: data.orderId");
            }
            Object match = event.getValue("value");
            if (!(match instanceof String || match instanceof Number || match instanceof Boolean)) {
                throw new InvalidTaskException("suspend.event.value must be a string, a number or a boolean");
            }
            if (String.valueOf(match).length() > Wait.MOST_CHARS) {
                throw new InvalidTaskException(
                        "suspend.event.value must be at most " + Wait.MOST_CHARS + " characters as text");
            }
            return new Suspend(
                    step == null ? name : step, Wait.Kind.EVENT, name, field, String.valueOf(match), null, timeoutMs);
        }
        if (timeoutMs != null) {
            throw new InvalidTaskException(
                    "suspend.timeoutMs is for a signal or an event; a sleep has until or sleepMs");
        }
        if (json.containsKey("until")) {
            Instant until = Instants.parse(json.getValue("until"), "suspend.until");
            return new Suspend(step == null ? "sleep@" + until : step, Wait.Kind.SLEEP, null, null, null, until, null);
        }
        Long sleepMs = millis(json, "sleepMs");
        if (step == null) {
            throw new InvalidTaskException("suspend.step must name a sleep of sleepMs, so that it is not slept again");
        }
        return new Suspend(step, Wait.Kind.SLEEP, null, null, null, null, sleepMs);
    }

    private static String name(JsonObject json, String field, boolean required) {
        Object value = json.getValue(field);
        if (value == null && !required) {
            return null;
        }
        if (!(value instanceof String text) || text.isEmpty() || text.length() > 200) {
            throw new InvalidTaskException("suspend." + field + " must be a name of 1 to 200 characters");
        }
        return text;
    }

    private static Long millis(JsonObject json, String field) {
        Object value = json.getValue(field);
        if (value == null) {
            return null;
        }
        if (!(value instanceof Integer || value instanceof Long)
                || ((Number) value).longValue() < 0
                || ((Number) value).longValue() > Instants.MAX_AHEAD_MS) {
            throw new InvalidTaskException("suspend." + field + " must be a whole number of milliseconds from 0 to "
                    + Instants.MAX_AHEAD_MS + " (a year)");
        }
        return ((Number) value).longValue();
    }
}
