package dev.taskline.model;

import java.time.Instant;

/**
 * A suspend's wait as journaled: the deadline its step keeps (the first one written; null: none),
 * and whether the task may run again at once (what it waits for is already there).
 */
public record Suspended(Instant until, boolean ready) {}
