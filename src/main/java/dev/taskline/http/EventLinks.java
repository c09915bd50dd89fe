package dev.taskline.http;

import java.util.UUID;

/**
 * The {@code eventsUrl} of a task, batch or flow. With keys configured it carries a short-lived token
 * for that stream (see {@link Authentication}), so that a browser's {@code EventSource} can open
 * it; without keys, the plain path.
 */
final class EventLinks {

    private final Authentication authentication;

    EventLinks(Authentication authentication) {
        this.authentication = authentication;
    }

    String task(UUID id, String tenant) {
        return link("task", "/api/tasks/", id, tenant);
    }

    String batch(UUID id, String tenant) {
        return link("batch", "/api/batches/", id, tenant);
    }

    String flow(UUID id, String tenant) {
        return link("flow", "/api/flows/", id, tenant);
    }

    private String link(String kind, String prefix, UUID id, String tenant) {
        String path = prefix + id + "/events";
        return authentication.enabled()
                ? path + "?token=" + authentication.streams().sign(kind, id, tenant)
                : path;
    }
}
