package dev.taskline.handler;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.taskline.testing.HandlerJars;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Handler jars read from a directory at start: what loads, and what stops a node from starting. */
class HandlerRegistryTest {

    @TempDir
    Path dir;

    @Test
    void no_directory_means_the_built_in_handlers_alone() {
        HandlerRegistry registry = HandlerRegistry.load(dir.resolve("absent"));
        assertTrue(registry.types().contains("sleep"), registry.types().toString());
        assertEquals(HandlerRegistry.fromClasspath().types(), registry.types());
    }

    @Test
    void the_example_jar_adds_its_task_type_beside_the_built_in_ones() throws Exception {
        HandlerJars.build(
                Path.of("examples/java-handler/src/main/java"),
                Path.of("examples/java-handler/src/main/resources"),
                dir.resolve("word-count-handler.jar"));
        HandlerRegistry registry = HandlerRegistry.load(dir);
        TaskHandler handler = registry.get("word-count");
        assertNotNull(handler, registry.types().toString());
        assertEquals("taskline-handlers", handler.getClass().getClassLoader().getName(), "loaded from the jar");
        assertNotNull(registry.get("sleep"));
    }

    @Test
    void two_jars_in_the_directory_each_add_theirs_and_other_files_are_ignored() throws Exception {
        HandlerJars.oneHandler("First", "first", dir.resolve("a.jar"));
        HandlerJars.oneHandler("Second", "second", dir.resolve("b.jar"));
        Files.writeString(dir.resolve("README.txt"), "not a jar, not read");
        HandlerRegistry registry = HandlerRegistry.load(dir);
        assertNotNull(registry.get("first"));
        assertNotNull(registry.get("second"));
    }

    @Test
    void a_jar_that_claims_a_built_in_type_stops_start_up_naming_the_jar() throws Exception {
        HandlerJars.oneHandler("Impostor", "sleep", dir.resolve("impostor.jar"));
        HandlerLoadException e = assertThrows(HandlerLoadException.class, () -> HandlerRegistry.load(dir));
        assertTrue(e.getMessage().contains("impostor.jar") && e.getMessage().contains("'sleep'"), e.getMessage());
    }

    @Test
    void two_jars_that_claim_one_type_stop_start_up_naming_both() throws Exception {
        HandlerJars.oneHandler("One", "twice", dir.resolve("one.jar"));
        HandlerJars.oneHandler("Two", "twice", dir.resolve("two.jar"));
        HandlerLoadException e = assertThrows(HandlerLoadException.class, () -> HandlerRegistry.load(dir));
        assertTrue(e.getMessage().contains("one.jar") && e.getMessage().contains("two.jar"), e.getMessage());
    }

    @Test
    void a_file_that_is_not_a_jar_stops_start_up_naming_it() throws Exception {
        Files.writeString(dir.resolve("broken.jar"), "not a zip");
        HandlerLoadException e = assertThrows(HandlerLoadException.class, () -> HandlerRegistry.load(dir));
        assertTrue(e.getMessage().contains("broken.jar"), e.getMessage());
    }

    @Test
    void a_services_entry_naming_a_missing_class_stops_start_up_naming_the_jar() throws Exception {
        Path resources = Files.createTempDirectory("res");
        Path services = resources.resolve("META-INF/services/dev.taskline.handler.TaskHandler");
        Files.createDirectories(services.getParent());
        Files.writeString(services, "example.Missing\n");
        Path sources = Files.createTempDirectory("src");
        HandlerJars.build(sources, resources, dir.resolve("dangling.jar"));
        HandlerLoadException e = assertThrows(HandlerLoadException.class, () -> HandlerRegistry.load(dir));
        assertTrue(
                e.getMessage().contains("dangling.jar") && e.getMessage().contains("example.Missing"), e.getMessage());
    }
}
