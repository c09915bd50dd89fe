package dev.taskline.journal;

/**
 * What an attempt's end does to the task's counts: a counted attempt stays spent; one that does not
 * count is given back; a hand-back also bumps the version, so that the holder is fenced. An attempt
 * given back after its handler ran drops the task's first-start deadline (the task did start, and
 * with its attempt count back at 0 the deadline would otherwise hold again and could expire it);
 * one given back unstarted keeps it.
 */
enum Attempts {
    COUNTED(0, 0, false),
    NOT_COUNTED(-1, 0, true),
    HANDED_BACK(-1, 1, true),
    UNSTARTED(-1, 1, false);

    final int attemptDelta;
    final int versionBump;
    final boolean dropsDeadline;

    Attempts(int attemptDelta, int versionBump, boolean dropsDeadline) {
        this.attemptDelta = attemptDelta;
        this.versionBump = versionBump;
        this.dropsDeadline = dropsDeadline;
    }
}
