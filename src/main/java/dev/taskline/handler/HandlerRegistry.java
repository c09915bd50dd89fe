package dev.taskline.handler;

import java.io.IOException;
import java.net.MalformedURLException;
import java.net.URISyntaxException;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.CodeSource;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.ServiceConfigurationError;
import java.util.ServiceLoader;
import java.util.TreeMap;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import java.util.logging.Logger;
import java.util.stream.Stream;

/**
 * The task types this node can run: the handlers built into the server, and those of the jars in
 * a handlers directory. {@code java -jar} ignores any class path given to it, so a directory read
 * at start is how a Java user adds a handler without rebuilding the server. The jars share one
 * class loader (a handler jar may need a library jar beside it), a child of the server's, so they
 * see the handler API and the server's libraries; each handler is told apart by the jar it came
 * from.
 */
public final class HandlerRegistry {

    private static final Logger LOG = Logger.getLogger(HandlerRegistry.class.getName());
    private static final String BUILT_IN = "the server";

    private final Map<String, TaskHandler> byType;

    private HandlerRegistry(Map<String, TaskHandler> byType) {
        this.byType = Collections.unmodifiableMap(byType);
    }

    /** The handlers built into the server alone. */
    public static HandlerRegistry fromClasspath() {
        return load(null);
    }

    /**
     * The built-in handlers and those of every {@code *.jar} in {@code dir} (none when it is null or
     * does not exist). Blocking: it reads files, so call it off the event loop.
     *
     * @throws HandlerLoadException naming the jar, when one cannot be read or its handlers cannot be
     *     made, or when two handlers claim one task type
     */
    public static HandlerRegistry load(Path dir) {
        Map<String, TaskHandler> found = new TreeMap<>();
        Map<String, String> origin = new TreeMap<>();
        ClassLoader server = HandlerRegistry.class.getClassLoader();
        for (TaskHandler handler : ServiceLoader.load(TaskHandler.class, server)) {
            add(found, origin, handler, BUILT_IN);
        }
        List<Path> jars = jars(dir);
        if (jars.isEmpty()) {
            return new HandlerRegistry(found);
        }
        URL[] urls = new URL[jars.size()];
        for (int i = 0; i < urls.length; i++) {
            urls[i] = readable(jars.get(i));
        }
        // Never closed: the handlers' classes live as long as the node.
        URLClassLoader loader = new URLClassLoader("taskline-handlers", urls, server);
        try {
            loadFrom(loader, dir, found, origin);
        } catch (ServiceConfigurationError e) {
            // A services entry names a class the jar does not have, or one that is no TaskHandler.
            throw new HandlerLoadException(
                    "a handler listed in " + listing(jars, e) + " could not be found or made: " + e.getMessage(), e);
        }
        return new HandlerRegistry(found);
    }

    private static void loadFrom(
            URLClassLoader loader, Path dir, Map<String, TaskHandler> found, Map<String, String> origin) {
        ServiceLoader.load(TaskHandler.class, loader).stream()
                // The child loader also finds the server's own handlers, through its parent.
                .filter(provider -> provider.type().getClassLoader() == loader)
                .forEach(provider -> {
                    String jar = jarOf(provider.type(), dir);
                    TaskHandler handler;
                    try {
                        handler = provider.get();
                    } catch (ServiceConfigurationError | LinkageError e) {
                        throw new HandlerLoadException(
                                "handler " + provider.type().getName() + " in " + jar + " could not be made: "
                                        + e.getMessage(),
                                e);
                    }
                    add(found, origin, handler, jar);
                    LOG.info("task type '" + handler.type() + "' from " + jar);
                });
    }

    /** The jars whose services entry lists a class the error names; all of them when none does. */
    private static String listing(List<Path> jars, ServiceConfigurationError e) {
        List<String> named = new ArrayList<>();
        for (Path jar : jars) {
            try (JarFile file = new JarFile(jar.toFile())) {
                JarEntry entry = file.getJarEntry("META-INF/services/" + TaskHandler.class.getName());
                if (entry == null) {
                    continue;
                }
                String listed = new String(file.getInputStream(entry).readAllBytes(), StandardCharsets.UTF_8);
                for (String line : listed.split("\\R")) {
                    String name = line.replaceAll("#.*", "").trim();
                    if (!name.isEmpty() && String.valueOf(e.getMessage()).contains(name)) {
                        named.add(jar.toString());
                        break;
                    }
                }
            } catch (IOException ignored) {
                // Every jar was opened once already; one that fails now is not the one to name.
            }
        }
        return named.isEmpty() ? jars.toString() : String.join(", ", named);
    }

    private static void add(
            Map<String, TaskHandler> found, Map<String, String> origin, TaskHandler handler, String from) {
        String type;
        try {
            type = handler.type();
        } catch (RuntimeException e) {
            throw new HandlerLoadException(
                    "handler " + handler.getClass().getName() + " in " + from + " failed to name its task type: " + e,
                    e);
        }
        if (type == null || type.isBlank()) {
            throw new HandlerLoadException(
                    "handler " + handler.getClass().getName() + " in " + from + " names no task type", null);
        }
        TaskHandler previous = found.putIfAbsent(type, handler);
        if (previous != null && previous.getClass() != handler.getClass()) {
            throw new HandlerLoadException(
                    "two handlers claim task type '" + type + "': "
                            + previous.getClass().getName() + " in " + origin.get(type) + " and "
                            + handler.getClass().getName() + " in " + from,
                    null);
        }
        origin.putIfAbsent(type, from);
    }

    private static List<Path> jars(Path dir) {
        if (dir == null || !Files.exists(dir)) {
            return List.of();
        }
        if (!Files.isDirectory(dir)) {
            throw new HandlerLoadException("the handlers directory " + dir + " is not a directory", null);
        }
        try (Stream<Path> files = Files.list(dir.toAbsolutePath().normalize())) {
            return files.filter(f -> f.getFileName().toString().endsWith(".jar"))
                    .sorted()
                    .toList();
        } catch (IOException e) {
            throw new HandlerLoadException("the handlers directory " + dir + " cannot be read: " + e.getMessage(), e);
        }
    }

    /** The jar's URL, once it is known to be a jar: a class loader would only fail later, and vaguely. */
    private static URL readable(Path jar) {
        try (JarFile ignored = new JarFile(jar.toFile())) {
            return jar.toUri().toURL();
        } catch (MalformedURLException e) {
            throw new HandlerLoadException("handler jar " + jar + " has no usable path: " + e.getMessage(), e);
        } catch (IOException e) {
            throw new HandlerLoadException("handler jar " + jar + " cannot be read as a jar: " + e.getMessage(), e);
        }
    }

    private static String jarOf(Class<?> type, Path dir) {
        CodeSource source = type.getProtectionDomain().getCodeSource();
        if (source == null || source.getLocation() == null) {
            return "a jar in " + dir;
        }
        try {
            return Path.of(source.getLocation().toURI()).toString();
        } catch (URISyntaxException | IllegalArgumentException e) {
            return source.getLocation().toString();
        }
    }

    public TaskHandler get(String type) {
        return byType.get(type);
    }

    public Collection<String> types() {
        return byType.keySet();
    }
}
