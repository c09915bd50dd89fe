package dev.taskline.schedule;

/** A schedule of that name exists already (409): schedules are replaced by deleting and making anew. */
public final class ScheduleExistsException extends RuntimeException {

    public ScheduleExistsException(String name) {
        super(
                "a schedule named '" + name + "' exists already; delete it first to make another of that name",
                null,
                false,
                false);
    }
}
