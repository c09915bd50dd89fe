package dev.taskline.admission;

import dev.taskline.config.QueueConfig;
import dev.taskline.model.problem.InvalidTaskException;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * Reads submissions from request bodies (and schedules' tasks, from the API or a config). Fields
 * must have the JSON type the API documents, and unknown fields are refused, so that a misspelt
 * option ("prority") is an error the client sees, not a silent default. What it cannot read is an
 * {@link InvalidTaskException} (422).
 */
public final class SubmissionJson {

    private static final Set<String> TASK_FIELDS = Set.of(
            "type",
            "payload",
            "queue",
            "priority",
            "maxAttempts",
            "timeoutMs",
            "delayMs",
            "runAt",
            "concurrencyKey",
            "startBy",
            "startWithinMs");
    private static final Set<String> BATCH_FIELDS = Set.of("tasks");

    private SubmissionJson() {}

    /** The fields of one task, for readers that accept them among fields of their own (a flow's task). */
    public static Set<String> taskFields() {
        return TASK_FIELDS;
    }

    public static Submission task(JsonObject body) {
        return task(body, "");
    }

    public static List<Submission> batch(JsonObject body) {
        InvalidTaskException.unlessKnown(body, BATCH_FIELDS, "");
        Object tasks = body.getValue("tasks");
        if (!(tasks instanceof JsonArray array)) {
            throw new InvalidTaskException("tasks must be an array of task objects");
        }
        List<Submission> submissions = new ArrayList<>(array.size());
        for (int i = 0; i < array.size(); i++) {
            Object item = array.getValue(i);
            if (!(item instanceof JsonObject object)) {
                throw new InvalidTaskException("tasks[" + i + "] must be an object");
            }
            submissions.add(task(object, "tasks[" + i + "]."));
        }
        return submissions;
    }

    /** As {@link #task(JsonObject)}, with {@code where} before every field an error names ("task."). */
    public static Submission task(JsonObject body, String where) {
        InvalidTaskException.unlessKnown(body, TASK_FIELDS, where);
        Object type = body.getValue("type");
        if (!(type instanceof String text) || text.isBlank() || text.length() > 200) {
            throw new InvalidTaskException(where + "type must be a non-empty string of at most 200 characters");
        }
        Object payload = body.getValue("payload");
        if (payload != null && !(payload instanceof JsonObject)) {
            throw new InvalidTaskException(where + "payload must be an object");
        }
        Object queue = body.getValue("queue");
        if (queue != null && !(queue instanceof String)) {
            throw new InvalidTaskException(where + "queue must be a string");
        }
        Object key = body.getValue("concurrencyKey");
        if (key != null
                && (!(key instanceof String keyText)
                        || keyText.isEmpty()
                        || keyText.length() > QueueConfig.MAX_KEY_LENGTH)) {
            throw new InvalidTaskException(
                    where + "concurrencyKey must be a string of 1 to " + QueueConfig.MAX_KEY_LENGTH + " characters");
        }
        return new Submission(
                text,
                payload == null ? new JsonObject() : (JsonObject) payload,
                (String) queue,
                intOrNull(body, "priority", where),
                intOrNull(body, "maxAttempts", where),
                longOrNull(body, "timeoutMs", where),
                longOrNull(body, "delayMs", where),
                instantOrNull(body, "runAt", where),
                (String) key,
                instantOrNull(body, "startBy", where),
                longOrNull(body, "startWithinMs", where));
    }

    private static java.time.Instant instantOrNull(JsonObject body, String field, String where) {
        Object value = body.getValue(field);
        return value == null ? null : dev.taskline.model.Instants.parse(value, where + field);
    }

    private static Integer intOrNull(JsonObject body, String field, String where) {
        Long value = longOrNull(body, field, where);
        if (value == null) {
            return null;
        }
        if (value < Integer.MIN_VALUE || value > Integer.MAX_VALUE) {
            throw new InvalidTaskException(where + field + " is out of range");
        }
        return value.intValue();
    }

    private static Long longOrNull(JsonObject body, String field, String where) {
        Object value = body.getValue(field);
        if (value == null) {
            return null;
        }
        if (value instanceof Integer || value instanceof Long) {
            return ((Number) value).longValue();
        }
        throw new InvalidTaskException(where + field + " must be an integer");
    }
}
