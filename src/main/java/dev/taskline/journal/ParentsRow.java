package dev.taskline.journal;

/** One row of flow_parents_of (migration 000018), read with {@code maxBytes} as its bound. */
record ParentsRow(int parents, long bytes, String values, String states, long maxBytes) {}
