package dev.taskline.config;

/** Configuration that cannot start a node; the message names the offending key. */
public class ConfigException extends RuntimeException {
    public ConfigException(String message) {
        super(message);
    }

    public ConfigException(String message, Throwable cause) {
        super(message, cause);
    }
}
