package dev.taskline.model;

/** What a heartbeat learned. */
public enum Heartbeat {
    HELD,
    CANCEL_REQUESTED,
    LOST
}
