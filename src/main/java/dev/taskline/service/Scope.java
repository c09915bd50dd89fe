package dev.taskline.service;

/** What a caller may do. {@link #ADMIN} may do everything, across tenants. */
public enum Scope {
    /** Submit tasks and batches; cancel and retry one's own. */
    SUBMIT,
    /** Read tasks, batches, lists, queues, stats, and follow streams. */
    READ,
    /** Claim, heartbeat, complete and fail tasks of remote queues. */
    WORK,
    /** Everything: bulk retry, metrics, acting for any tenant. */
    ADMIN;

    /** The scope a configuration names ({@code "submit"}, ...). */
    public static Scope of(String name) {
        return valueOf(name.toUpperCase(java.util.Locale.ROOT));
    }

    public String label() {
        return name().toLowerCase(java.util.Locale.ROOT);
    }
}
