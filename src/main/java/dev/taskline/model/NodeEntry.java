package dev.taskline.model;

/**
 * What a node journals of itself when it starts.
 *
 * @param queues its queues' definitions as canonical JSON text
 */
public record NodeEntry(String id, String version, String address, String queues, String queuesHash) {}
