package dev.taskline.model.problem;

/** A well-formed submission that breaks a rule (unknown type or queue, bad range, batch size). */
public final class InvalidTaskException extends ProblemException {
    public InvalidTaskException(String message) {
        super(422, "invalid-task", "Invalid task", message);
    }

    /** Refuses {@code body} when it has a field {@code known} does not list; {@code where} prefixes its name. */
    public static void unlessKnown(io.vertx.core.json.JsonObject body, java.util.Set<String> known, String where) {
        for (String field : body.fieldNames()) {
            if (!known.contains(field)) {
                throw new InvalidTaskException(where + field + " is not a known field (known: "
                        + String.join(", ", known.stream().sorted().toList()) + ")");
            }
        }
    }
}
