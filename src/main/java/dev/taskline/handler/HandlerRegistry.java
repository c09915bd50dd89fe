package dev.taskline.handler;

import java.util.Collection;
import java.util.Collections;
import java.util.Map;
import java.util.ServiceLoader;
import java.util.TreeMap;

/** The task types this node can run, found on the classpath. */
public final class HandlerRegistry {

  private final Map<String, TaskHandler> byType;

  private HandlerRegistry(Map<String, TaskHandler> byType) {
    this.byType = Collections.unmodifiableMap(byType);
  }

  public static HandlerRegistry fromClasspath() {
    Map<String, TaskHandler> found = new TreeMap<>();
    for (TaskHandler handler : ServiceLoader.load(TaskHandler.class)) {
      TaskHandler previous = found.putIfAbsent(handler.type(), handler);
      if (previous != null && previous.getClass() != handler.getClass()) {
        throw new IllegalStateException("two handlers claim task type '" + handler.type() + "': "
            + previous.getClass().getName() + " and " + handler.getClass().getName());
      }
    }
    return new HandlerRegistry(found);
  }

  public TaskHandler get(String type) {
    return byType.get(type);
  }

  public Collection<String> types() {
    return byType.keySet();
  }
}
