package dev.taskline.testing;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;

/** A clock that tests move by hand; starts at the real time so ids and rows look ordinary. */
public final class MutableClock extends Clock {

    private volatile Instant now;

    public MutableClock() {
        this(Instant.now());
    }

    public MutableClock(Instant start) {
        this.now = start;
    }

    /**
     * A clock at the time of the newest task id this JVM could make now: ids are made monotonic
     * across every clock of the JVM (TaskIds), so a test that moved its own clock days ahead leaves
     * the ids of the tests after it stamped then. A test that compares ids with its clock's time
     * (retention's cut-off) starts here.
     */
    public static MutableClock afterEveryId() {
        long millis = dev.taskline.model.TaskIds.next(Clock.systemUTC()).getMostSignificantBits() >>> 16;
        return new MutableClock(Instant.ofEpochMilli(millis + 1));
    }

    public void advance(Duration by) {
        now = now.plus(by);
    }

    @Override
    public ZoneId getZone() {
        return ZoneOffset.UTC;
    }

    @Override
    public Clock withZone(ZoneId zone) {
        return this;
    }

    @Override
    public Instant instant() {
        return now;
    }
}
