package dev.taskline.journal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.taskline.model.GatedClaim;
import dev.taskline.model.Reason;
import dev.taskline.model.TaskState;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/** The reasons (and refusals) the statements write as literals are the Java enums', so the two cannot drift apart. */
class ReasonTest {

    /** A flow's own states and its tasks' joins (migration 000017), which are neither. */
    private static final Set<String> FLOW_LITERALS =
            Set.of("running", "succeeded", "failed", "cancelled", "all", "settled", "any");

    private static final Pattern LITERAL = Pattern.compile("'([a-z_]+)'");

    @Test
    void every_lower_case_literal_in_the_statements_is_a_state_or_a_reason() throws IOException {
        Set<String> unknown = new TreeSet<>();
        Set<String> used = new TreeSet<>();
        for (String file :
                new String[] {"/sql/queries/tasks.sql", "/sql/queries/events.sql", "/sql/queries/flows.sql"}) {
            String text;
            try (InputStream in = ReasonTest.class.getResourceAsStream(file)) {
                text = new String(in.readAllBytes(), StandardCharsets.UTF_8);
            }
            Matcher m = LITERAL.matcher(text);
            while (m.find()) {
                String literal = m.group(1);
                used.add(literal);
                if (TaskState.parse(literal) == null
                        && Reason.parse(literal) == null
                        && GatedClaim.Refusal.parse(literal) == null
                        && !FLOW_LITERALS.contains(literal)) {
                    unknown.add(literal);
                }
            }
        }
        assertEquals(
                Set.of(),
                unknown,
                "literals in sql/queries that are neither a TaskState, a Reason nor a claim's Refusal");
        // The ones the SQL writes itself; the others come from Java as parameters.
        for (Reason reason : new Reason[] {
            Reason.SUBMITTED,
            Reason.CLAIMED,
            Reason.CANCEL_REQUESTED,
            Reason.CANCELLED,
            Reason.LEASE_EXPIRED,
            Reason.RETRIED,
            Reason.EXPIRED,
            Reason.PARENT_FAILED
        }) {
            assertTrue(used.contains(reason.sql()), reason + " is written by a statement");
        }
    }

    @Test
    void a_reason_reads_back_as_itself_and_an_unknown_one_as_null() {
        for (Reason reason : Reason.values()) {
            assertEquals(reason, Reason.parse(reason.sql()));
        }
        assertEquals(null, Reason.parse("requeued"));
    }
}
