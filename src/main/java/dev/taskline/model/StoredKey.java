package dev.taskline.model;

import java.util.List;

/** A live key as authentication needs it. */
public record StoredKey(String id, String hash, String tenant, List<String> scopes, List<String> queues) {}
