package dev.taskline.journal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.reflect.RecordComponent;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * Every packaged statement against the records that bind it: one whose parameters outnumber what
 * may be bound by name and value has a record, and each record's components are exactly its
 * statement's names. An edit to either side that leaves the other behind fails here, not in a
 * statement sent with its parameters out of place.
 */
class StatementParamsTest {

    private final Sql sql = Sql.queries();

    @Test
    void every_statement_of_more_than_four_parameters_is_bound_through_a_record_of_its_own_names() {
        List<String> wrong = new ArrayList<>();
        for (Sql.Statement statement : sql.all()) {
            Class<? extends Record> record = Params.FOR_STATEMENT.get(statement.name());
            if (record == null) {
                if (statement.params().size() > Sql.MOST_LOOSE) {
                    wrong.add(statement.name() + " takes " + statement.params() + " but no record binds it");
                }
                continue;
            }
            Set<String> components = Arrays.stream(record.getRecordComponents())
                    .map(RecordComponent::getName)
                    .map(Sql.Bound::snakeCase)
                    .collect(Collectors.toCollection(TreeSet::new));
            Set<String> params = new TreeSet<>(statement.params());
            if (!components.equals(params)) {
                wrong.add(statement.name() + " takes " + params + " but " + record.getSimpleName() + " has "
                        + components);
            }
        }
        assertEquals(List.of(), wrong);
    }

    @Test
    void every_record_binds_a_statement_that_exists() {
        Set<String> names = sql.all().stream().map(Sql.Statement::name).collect(Collectors.toSet());
        for (String name : Params.FOR_STATEMENT.keySet()) {
            assertTrue(names.contains(name), "Params names a statement '" + name + "' that sql/queries lacks");
        }
    }

    @Test
    void a_record_that_disagrees_with_its_statement_is_refused_when_it_is_bound() {
        Sql one = Sql.parse("-- name: claim\nSELECT :ids, :expected_versions, :worker_ids, :deadline, :now;\n");
        IllegalStateException e = org.junit.jupiter.api.Assertions.assertThrows(
                IllegalStateException.class, () -> one.bound("claim", Params.Claim.class));
        assertTrue(
                e.getMessage().contains("[lease_expires_at]") && e.getMessage().contains("[deadline]"), e.getMessage());
    }

    @Test
    void a_record_binds_each_component_into_the_place_its_name_takes() {
        Sql one = Sql.parse("-- name: page_in\nSELECT :most, :queue, :now, :aging_per_second, :held_ids;\n");
        var bound = one.bound("page_in", Params.PageIn.class);
        var tuple = bound.bind(new Params.PageIn("q", null, new java.util.UUID[0], 7, 0.5));
        assertEquals(7, tuple.getInteger(0));
        assertEquals("q", tuple.getString(1));
        assertEquals(0.5, tuple.getDouble(3));
    }
}
