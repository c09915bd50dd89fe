package dev.taskline.config;

/**
 * An event that starts a task: each event named {@code event} ({@code POST /api/events}) submits
 * one task of {@code type} to {@code queue}, the event's {@code data} as its payload, in the
 * sender's tenant; {@code concurrencyKey} (null: none), a dotted path into the event ({@code
 * data.userId}), names the task's concurrency key, so that one user's runs keep their order.
 */
public record Trigger(String event, String type, String queue, String concurrencyKey) {

    public Trigger {
        if (event == null || event.isEmpty() || event.length() > 200) {
            throw new ConfigException("triggers[].event must be a name of 1 to 200 characters");
        }
        if (type == null || type.isEmpty()) {
            throw new ConfigException("triggers[].type must name a task type (trigger of '" + event + "')");
        }
        if (queue == null) {
            queue = TasklineConfig.DEFAULT_QUEUE;
        }
        if (concurrencyKey != null && (!concurrencyKey.startsWith("data.") || concurrencyKey.length() <= 5)) {
            throw new ConfigException("triggers[].concurrencyKey must be a path into the event's data, as"
                    + " data.userId (trigger of '" + event + "')");
        }
    }
}
