package dev.taskline.config;

/**
 * One named queue on this node.
 *
 * @param slots       tasks of this queue that may run at once on this node
 * @param capacity    most tasks that may wait in memory; beyond it submissions get 429
 * @param leaseMs     how long a claim holds without a heartbeat before another worker may take over
 * @param heartbeatMs how often a running task renews its lease; must be well under leaseMs
 */
public record QueueConfig(String name, int slots, int capacity, long leaseMs, long heartbeatMs) {

  public static final int DEFAULT_SLOTS = 4;
  public static final int DEFAULT_CAPACITY = 10_000;
  public static final long DEFAULT_LEASE_MS = 30_000;

  public QueueConfig {
    String key = "queues." + name;
    if (name == null || !name.matches("[a-zA-Z0-9_.-]{1,64}")) {
      throw new ConfigException("queues: queue name '" + name + "' must be 1-64 letters, digits, '_', '.' or '-'");
    }
    if (slots < 1 || slots > 10_000) {
      throw new ConfigException(key + ".slots must be from 1 to 10000, got " + slots);
    }
    if (capacity < 1 || capacity > 10_000_000) {
      throw new ConfigException(key + ".capacity must be from 1 to 10000000, got " + capacity);
    }
    if (leaseMs < 100) {
      throw new ConfigException(key + ".leaseMs must be at least 100, got " + leaseMs);
    }
    // A heartbeat that is not comfortably inside the lease lets a healthy worker lose its task.
    if (heartbeatMs < 10 || heartbeatMs > leaseMs / 2) {
      throw new ConfigException(key + ".heartbeatMs must be at least 10 and at most half of leaseMs ("
          + leaseMs + "), got " + heartbeatMs);
    }
  }

  public static QueueConfig defaults(String name) {
    return new QueueConfig(name, DEFAULT_SLOTS, DEFAULT_CAPACITY, DEFAULT_LEASE_MS, DEFAULT_LEASE_MS / 3);
  }
}
