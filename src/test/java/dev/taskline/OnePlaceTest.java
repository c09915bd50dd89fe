package dev.taskline;

import static com.tngtech.archunit.core.domain.JavaCall.Predicates.target;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.assignableTo;
import static com.tngtech.archunit.core.domain.properties.HasName.Predicates.nameMatching;
import static com.tngtech.archunit.core.domain.properties.HasOwner.Predicates.With.owner;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.constructors;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.domain.JavaConstructor;
import com.tngtech.archunit.lang.ArchCondition;
import com.tngtech.archunit.lang.ConditionEvents;
import com.tngtech.archunit.lang.SimpleConditionEvent;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Decisions that must each have one home, and collaborators kept few, held against the compiled
 * classes of {@code src/main} (as {@link ArchitectureTest} holds the parts' dependencies).
 */
class OnePlaceTest {

    /** The most things a class's constructor may be handed; past it, group what belongs together. */
    static final int MOST_COLLABORATORS = 8;

    private static final String END = "dev.taskline.worker.End";
    private static final String ENDINGS = "dev.taskline.worker.Endings";
    private static final String BACKOFF = "dev.taskline.worker.Backoff";
    private static final String END_WRITER = "dev.taskline.worker.EndWriter";

    private static JavaClasses main;

    @BeforeAll
    static void load() {
        main = ArchitectureTest.mainClasses();
    }

    @Test
    void how_an_attempt_ends_is_decided_in_one_class() {
        noClasses()
                .that()
                .doNotHaveFullyQualifiedName(ENDINGS)
                .should()
                .callConstructorWhere(target(owner(assignableTo(END))))
                .because("local, push and remote attempts end by one set of rules (Endings)")
                .check(main);
        noClasses()
                .that()
                .doNotHaveFullyQualifiedName(ENDINGS)
                .and()
                .doNotHaveFullyQualifiedName(ENDINGS + "$Policy")
                .and()
                .doNotHaveFullyQualifiedName(BACKOFF)
                .should()
                .callMethodWhere(target(owner(assignableTo(BACKOFF))))
                .because("one retry policy")
                .check(main);
    }

    @Test
    void an_attempts_end_is_written_by_one_class() {
        noClasses()
                .that()
                .doNotHaveFullyQualifiedName(END_WRITER)
                .should()
                .callMethodWhere(target(owner(assignableTo("dev.taskline.journal.Journal")))
                        .and(target(nameMatching(
                                "succeed|succeedOrCancelled|fail|failOrCancelled|cancelled|retryAt|snoozeUntil"
                                        + "|release|handBackUnstarted"))))
                .orShould()
                .callMethodWhere(target(owner(assignableTo("dev.taskline.journal.JournalFlows")))
                        .and(target(nameMatching("succeedSpawning"))))
                .because("what is decided (an End) is turned into the journal's verbs in one place")
                .check(main);
    }

    @Test
    void the_journals_and_the_clusters_signals_are_given_in_one_place() {
        noClasses()
                .that()
                .doNotHaveFullyQualifiedName("dev.taskline.Taskline")
                .should()
                .callMethodWhere(target(owner(assignableTo("dev.taskline.journal.Journal"))
                                .or(owner(assignableTo("dev.taskline.cluster.Cluster"))))
                        .and(target(nameMatching("signals"))))
                .because("where a lower part must call back up, it does so through one named port, given once"
                        + " by the wiring (as the queues' QueueSignals)")
                .check(main);
    }

    @Test
    void no_class_is_handed_more_than_eight_things() {
        constructors()
                .that()
                .areDeclaredInClassesThat()
                .areNotAssignableTo(Record.class)
                .should(new ArchCondition<JavaConstructor>("take at most " + MOST_COLLABORATORS + " parameters") {
                    @Override
                    public void check(JavaConstructor constructor, ConditionEvents events) {
                        int count = constructor.getRawParameterTypes().size();
                        if (count > MOST_COLLABORATORS) {
                            events.add(SimpleConditionEvent.violated(
                                    constructor, constructor.getFullName() + " takes " + count));
                        }
                    }
                })
                // Records are values: their width follows the data they carry, not a class's roles.
                .because("a class handed more is doing two things or should be handed a group")
                .check(main);
    }
}
