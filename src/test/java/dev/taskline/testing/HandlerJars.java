package dev.taskline.testing;

import dev.taskline.handler.TaskHandler;
import java.io.IOException;
import java.io.OutputStream;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.jar.JarEntry;
import java.util.jar.JarOutputStream;
import java.util.stream.Stream;
import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;

/** Builds handler jars as a user would, with the JDK's own compiler: sources in, a jar out. */
public final class HandlerJars {

    private HandlerJars() {}

    /**
     * Compiles the {@code .java} files under {@code sources} against the handler API and Vert.x, and
     * writes them with {@code resources} (may be null) into {@code jar}.
     */
    public static Path build(Path sources, Path resources, Path jar) throws IOException {
        Path classes = Files.createTempDirectory("handler-classes");
        List<String> args = new ArrayList<>(List.of(
                "--release",
                "17",
                "-d",
                classes.toString(),
                "-classpath",
                location(TaskHandler.class) + java.io.File.pathSeparator + location(io.vertx.core.Future.class)));
        try (Stream<Path> files = Files.walk(sources)) {
            files.filter(f -> f.toString().endsWith(".java")).forEach(f -> args.add(f.toString()));
        }
        JavaCompiler compiler = ToolProvider.getSystemJavaCompiler();
        boolean anySource = args.stream().anyMatch(a -> a.endsWith(".java"));
        if (anySource && compiler.run(null, null, null, args.toArray(new String[0])) != 0) {
            throw new IllegalStateException("the handler sources under " + sources + " did not compile");
        }
        try (JarOutputStream out = new JarOutputStream(Files.newOutputStream(jar))) {
            add(out, classes);
            if (resources != null) {
                add(out, resources);
            }
        }
        return jar;
    }

    /** A jar of one handler class named {@code className} whose type is {@code type}. */
    public static Path oneHandler(String className, String type, Path jar) throws IOException {
        Path sources = Files.createTempDirectory("handler-src");
        Path file = sources.resolve("example").resolve(className + ".java");
        Files.createDirectories(file.getParent());
        Files.writeString(file, """
        package example;
        public final class %s implements dev.taskline.handler.TaskHandler {
          public String type() { return "%s"; }
          public io.vertx.core.Future<io.vertx.core.json.JsonObject> run(dev.taskline.handler.TaskContext c) {
            return io.vertx.core.Future.succeededFuture(new io.vertx.core.json.JsonObject().put("by", "%s"));
          }
        }
        """.formatted(className, type, className));
        Path resources = Files.createTempDirectory("handler-res");
        Path services = resources.resolve("META-INF/services/dev.taskline.handler.TaskHandler");
        Files.createDirectories(services.getParent());
        Files.writeString(services, "example." + className + "\n");
        return build(sources, resources, jar);
    }

    private static void add(JarOutputStream out, Path root) throws IOException {
        try (Stream<Path> files = Files.walk(root)) {
            for (Path file : files.filter(Files::isRegularFile).sorted().toList()) {
                out.putNextEntry(new JarEntry(root.relativize(file).toString().replace('\\', '/')));
                Files.copy(file, (OutputStream) out);
                out.closeEntry();
            }
        }
    }

    private static String location(Class<?> type) {
        try {
            return Path.of(type.getProtectionDomain()
                            .getCodeSource()
                            .getLocation()
                            .toURI())
                    .toString();
        } catch (URISyntaxException e) {
            throw new IllegalStateException(e);
        }
    }
}
