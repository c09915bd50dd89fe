package dev.taskline.journal;

/**
 * The journal is writing as fast as it can and a full insert's worth of submissions already waits
 * for it: this one would wait longer than the next insert, so it is refused at once (nothing was
 * journaled). The queue itself may have room; the client should come back in a moment.
 */
public class JournalBusyException extends RuntimeException {

    public static final long RETRY_AFTER_SECONDS = 1;

    private final int waiting;

    public JournalBusyException(int waiting) {
        super("the journal is busy: " + waiting + " submissions already wait for the next insert", null, false, false);
        this.waiting = waiting;
    }

    public int waiting() {
        return waiting;
    }
}
