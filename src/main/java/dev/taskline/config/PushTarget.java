package dev.taskline.config;

import java.net.URI;
import java.util.Map;

/**
 * Where a push queue's tasks are run: Taskline POSTs each task to {@code url} and the answer
 * decides its outcome. The URL comes from configuration only, never from a payload.
 *
 * @param timeoutMs how long one call may take before the attempt fails (and is retried)
 * @param headers   sent with every call (an API key of the target, say)
 */
public record PushTarget(URI url, long timeoutMs, Map<String, String> headers) {

    public PushTarget {
        if (url == null
                || !url.isAbsolute()
                || url.getHost() == null
                || !("http".equals(url.getScheme()) || "https".equals(url.getScheme()))) {
            throw new ConfigException("push.url must be an absolute http or https URL, got " + url);
        }
        if (timeoutMs < 1 || timeoutMs > 3_600_000) {
            throw new ConfigException("push.timeoutMs must be from 1 to 3600000, got " + timeoutMs);
        }
        headers = headers == null ? Map.of() : Map.copyOf(headers);
        for (String name : headers.keySet()) {
            if (!name.matches("[A-Za-z0-9-]{1,64}")
                    || name.toLowerCase(java.util.Locale.ROOT).startsWith("taskline-")) {
                throw new ConfigException("push.headers: '" + name
                        + "' must be a header name of letters, digits and '-'," + " not one of Taskline's own");
            }
        }
    }
}
