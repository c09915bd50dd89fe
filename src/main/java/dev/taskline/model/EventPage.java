package dev.taskline.model;

import java.util.List;
import java.util.Set;

/** Events in id order, and the ids (as text) of the transactions in progress when they were read. */
public record EventPage(List<Event> events, Set<String> inProgress) {}
