package dev.taskline.workflow;

import dev.taskline.admission.Submission;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * One task as read from a flow's body, before its parents' keys are checked against the flow.
 * {@code place} names it in errors ("tasks[2]", "chain[1].group[0]"); {@code given} is its own
 * dependsOn (each key to where it first appears in the array, for the error that names it);
 * {@code structural} the positions a shorthand made it depend on, filled in as the shorthand is
 * walked.
 */
final class FlowDraft {

    final String place;
    final String key;
    final boolean keyGiven;
    final Submission submission;
    final Map<String, Integer> given;
    final Join join;
    final List<Integer> structural = new ArrayList<>();

    FlowDraft(
            String place, String key, boolean keyGiven, Submission submission, Map<String, Integer> given, Join join) {
        this.place = place;
        this.key = key;
        this.keyGiven = keyGiven;
        this.submission = submission;
        this.given = given;
        this.join = join;
    }
}
