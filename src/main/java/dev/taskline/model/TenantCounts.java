package dev.taskline.model;

/**
 * One tenant's tasks in one queue, as the journal holds them (every node's): waiting (pending and
 * due), scheduled (pending, due later), running, finished (still retained), and all of them; of the
 * finished, those that expired (not started by their deadline).
 */
public record TenantCounts(
        String queue, long waiting, long scheduled, long running, long finished, long accepted, long expired) {}
