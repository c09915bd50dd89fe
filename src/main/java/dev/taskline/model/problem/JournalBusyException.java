package dev.taskline.model.problem;

import io.vertx.core.json.JsonObject;

/**
 * The journal is writing as fast as it can and a full insert's worth of submissions already waits
 * for it: this one would wait longer than the next insert, so it is refused at once (nothing was
 * journaled). The queue itself may have room; the client should come back in a moment.
 */
public final class JournalBusyException extends ProblemException {

    private static final long RETRY_AFTER_SECONDS = 1;

    private final int waiting;

    public JournalBusyException(int waiting) {
        super(
                429,
                "journal-busy",
                "Journal busy",
                "the journal is busy: " + waiting + " submissions already wait for the next insert");
        this.waiting = waiting;
    }

    public int waiting() {
        return waiting;
    }

    @Override
    public JsonObject extensions() {
        return new JsonObject().put("waiting", waiting).put("retryAfterSeconds", RETRY_AFTER_SECONDS);
    }

    @Override
    public Long retryAfterSeconds() {
        return RETRY_AFTER_SECONDS;
    }

    @Override
    public boolean refusesWork() {
        return true;
    }
}
