package dev.taskline.worker;

import dev.taskline.model.TaskState;

/**
 * What the journal says became of a task once an attempt's end was written: its state (null: the
 * lease was lost, nothing was written), and for a suspend whether it is due again at once.
 */
record Written(TaskState state, boolean dueNow) {

    static final Written FENCED = new Written(null, false);

    static Written of(TaskState state) {
        return state == null ? FENCED : new Written(state, false);
    }
}
