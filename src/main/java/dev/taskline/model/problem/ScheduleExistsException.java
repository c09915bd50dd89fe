package dev.taskline.model.problem;

/** A schedule of that name exists already (409): schedules are replaced by deleting and making anew. */
public final class ScheduleExistsException extends ProblemException {

    public ScheduleExistsException(String name) {
        super(
                409,
                "schedule-exists",
                "Schedule exists",
                "a schedule named '" + name + "' exists already; delete it first to make another of that name");
    }
}
