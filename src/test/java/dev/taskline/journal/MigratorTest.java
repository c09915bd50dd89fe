package dev.taskline.journal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/** How the migrator finds its migrations: by the index, in order, whatever else the folder holds. */
class MigratorTest {

    @Test
    void the_index_names_every_migration_of_the_folder_in_the_order_of_their_numbers() throws IOException {
        Path folder = Path.of("sql/migrations");
        List<String> files;
        try (Stream<Path> listed = Files.list(folder)) {
            files = listed.map(f -> f.getFileName().toString())
                    .filter(f -> f.endsWith(".sql"))
                    .sorted()
                    .toList();
        }
        assertEquals(files, Migrator.names(Files.readString(folder.resolve(Migrator.INDEX))));
    }

    @Test
    void migrations_are_read_as_the_index_lists_them_and_nothing_else() {
        Map<String, String> files = Map.of(
                Migrator.INDEX,
                "# comment\n000001_first.sql\n\n000002_second.sql\n",
                "000001_first.sql",
                "SELECT 1",
                "000002_second.sql",
                "SELECT 2",
                "000003_not_listed.sql",
                "SELECT 3");
        assertEquals(List.of("SELECT 1", "SELECT 2"), Migrator.readAll(files::get));
    }

    @Test
    void an_index_out_of_order_or_with_a_gap_is_refused() {
        IllegalStateException gap =
                assertThrows(IllegalStateException.class, () -> Migrator.names("000001_first.sql\n000003_third.sql\n"));
        assertTrue(gap.getMessage().contains("migration 2 is due"), gap.getMessage());
        assertThrows(IllegalStateException.class, () -> Migrator.names("000002_second.sql\n000001_first.sql\n"));
    }

    @Test
    void an_index_line_that_is_not_a_migrations_name_is_refused() {
        assertThrows(IllegalStateException.class, () -> Migrator.names("000001_first.sql\nnotes.txt\n"));
    }

    @Test
    void the_packaged_migrations_are_all_read() {
        List<String> scripts = Migrator.readAll();
        assertTrue(scripts.size() >= 15, "migrations read: " + scripts.size());
        assertTrue(scripts.get(0).startsWith("-- 000001"), scripts.get(0).substring(0, 20));
    }
}
