package dev.taskline.model;

import io.vertx.core.json.JsonObject;
import java.time.Instant;

/**
 * What a suspended attempt waits for, in its step {@code step}: a sleep to {@code until}, a signal
 * named {@code name}, or an event named {@code name} whose {@code field} (a dotted path into the
 * event, {@code data.orderId}) equals {@code value} (a JSON scalar, kept as its text). {@code
 * until} is the sleep's end or the wait's timeout; null for a wait with none.
 */
public record Wait(Kind kind, String step, String name, String field, String value, Instant until) {

    /** Longest name, field and value a wait may match: the three are one row of an index (tasks_event_waits). */
    public static final int MOST_CHARS = 200;

    public Wait {
        if (kind == Kind.EVENT && (value == null || value.length() > MOST_CHARS)) {
            // Past the index's row size PostgreSQL refuses the row: the attempt could not end at all.
            throw new dev.taskline.model.problem.InvalidTaskException(
                    "an event wait's value must be at most " + MOST_CHARS + " characters");
        }
        for (String text : new String[] {name, field}) {
            if (text != null && (text.isEmpty() || text.length() > MOST_CHARS)) {
                throw new dev.taskline.model.problem.InvalidTaskException(
                        "a wait's name and field must be 1 to " + MOST_CHARS + " characters");
            }
        }
    }

    public enum Kind {
        SLEEP,
        SIGNAL,
        EVENT;

        public String wire() {
            return name().toLowerCase(java.util.Locale.ROOT);
        }
    }

    public static Wait sleep(String step, Instant until) {
        return new Wait(Kind.SLEEP, step, null, null, null, until);
    }

    public static Wait signal(String step, String name, Instant until) {
        return new Wait(Kind.SIGNAL, step, name, null, null, until);
    }

    public static Wait event(String step, String name, String field, String value, Instant until) {
        return new Wait(Kind.EVENT, step, name, field, value, until);
    }

    /** As the journal keeps it on the task's row (its step and deadline beside). */
    public JsonObject matchJson() {
        JsonObject json = new JsonObject().put("kind", kind.wire());
        if (name != null) {
            json.put("name", name);
        }
        if (field != null) {
            json.put("field", field).put("value", value);
        }
        return json;
    }
}
