package dev.taskline.journal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.OutputStream;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.jar.JarEntry;
import java.util.jar.JarOutputStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** How the migrator finds its migrations: by number, in a folder or in the server's jar. */
class MigratorTest {

    @TempDir
    Path dir;

    @Test
    void migrations_are_read_in_the_order_of_their_numbers_whatever_their_names() throws Exception {
        write("000002_second.sql", "SELECT 2");
        write("000001_first.sql", "SELECT 1");
        write("000003.sql", "SELECT 3");
        assertEquals(List.of("SELECT 1", "SELECT 2", "SELECT 3"), Migrator.read(dir));
    }

    @Test
    void a_gap_in_the_numbers_is_refused() throws Exception {
        write("000001_first.sql", "SELECT 1");
        write("000003_third.sql", "SELECT 3");
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> Migrator.read(dir));
        assertTrue(e.getMessage().contains("no migration numbered 2"), e.getMessage());
    }

    @Test
    void two_migrations_of_one_number_are_refused() throws Exception {
        write("000001_first.sql", "SELECT 1");
        write("000001_again.sql", "SELECT 1");
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> Migrator.read(dir));
        assertTrue(e.getMessage().contains("two migrations numbered 000001"), e.getMessage());
    }

    @Test
    void a_file_that_is_not_named_as_a_migration_is_refused() throws Exception {
        write("000001_first.sql", "SELECT 1");
        write("notes.txt", "");
        assertThrows(IllegalStateException.class, () -> Migrator.read(dir));
    }

    @Test
    void the_migrations_are_read_from_the_server_jar_as_from_a_folder() throws Exception {
        Path jar = dir.resolve("server.jar");
        try (JarOutputStream out = new JarOutputStream(Files.newOutputStream(jar))) {
            entry(out, "sql/migrations/000001_first.sql", "SELECT 1");
            entry(out, "sql/migrations/000002_second.sql", "SELECT 2");
            entry(out, "sql/queries/other.sql", "SELECT 0");
        }
        URL folder = new URL("jar:" + jar.toUri() + "!/sql/migrations");
        assertEquals(List.of("SELECT 1", "SELECT 2"), Migrator.readAll(folder));
        assertEquals(List.of("SELECT 1", "SELECT 2"), Migrator.readAll(folder), "a second read, the jar closed again");
    }

    @Test
    void the_packaged_migrations_are_all_read() {
        List<String> scripts = Migrator.readAll();
        assertTrue(scripts.size() >= 15, "migrations read: " + scripts.size());
        assertTrue(scripts.get(0).startsWith("-- 000001"), scripts.get(0).substring(0, 20));
    }

    private void write(String name, String text) throws IOException {
        Files.writeString(dir.resolve(name), text);
    }

    private static void entry(JarOutputStream out, String name, String text) throws IOException {
        out.putNextEntry(new JarEntry(name));
        OutputStream body = out;
        body.write(text.getBytes(StandardCharsets.UTF_8));
        out.closeEntry();
    }
}
