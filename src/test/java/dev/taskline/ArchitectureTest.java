package dev.taskline;

import static com.tngtech.archunit.base.DescribedPredicate.not;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.resideInAPackage;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.type;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;
import static org.junit.jupiter.api.Assertions.assertEquals;

import com.tngtech.archunit.base.DescribedPredicate;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.lang.ArchRule;
import dev.taskline.journal.Journal;
import dev.taskline.journal.JournalFlows;
import dev.taskline.journal.JournalReads;
import dev.taskline.journal.JournalSteps;
import dev.taskline.queue.QueueRegistry;
import dev.taskline.queue.QueueSignals;
import dev.taskline.queue.TaskQueue;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The design's structure (its parts table and their "never" dependencies), held against the
 * compiled classes of {@code src/main}: a change that breaks it fails here, with the classes that
 * broke it named, rather than in a review months later.
 */
class ArchitectureTest {

    private static JavaClasses main;

    @BeforeAll
    static void load() {
        main = mainClasses();
    }

    /** The compiled classes of {@code src/main}, imported once for every architecture test class. */
    static synchronized JavaClasses mainClasses() {
        if (imported == null) {
            imported = new ClassFileImporter()
                    .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                    .importPackages("dev.taskline");
        }
        return imported;
    }

    private static JavaClasses imported;

    private static void holds(ArchRule rule) {
        rule.check(main);
    }

    @Test
    void no_cycle_between_the_parts() {
        holds(slices().matching("dev.taskline.(*)..").should().beFreeOfCycles());
    }

    @Test
    void nothing_below_the_wiring_depends_on_it() {
        holds(noClasses()
                .that()
                .resideOutsideOfPackage("dev.taskline")
                .should()
                .dependOnClassesThat()
                .resideInAPackage("dev.taskline"));
    }

    @Test
    void the_model_depends_on_nothing_of_ours_but_small_utilities() {
        holds(noClasses()
                .that()
                .resideInAPackage("dev.taskline.model..")
                .should()
                .dependOnClassesThat()
                .resideInAnyPackage(
                        "dev.taskline",
                        "dev.taskline.http..",
                        "dev.taskline.service..",
                        "dev.taskline.admission..",
                        "dev.taskline.queue..",
                        "dev.taskline.worker..",
                        "dev.taskline.journal..",
                        "dev.taskline.recovery..",
                        "dev.taskline.events..",
                        "dev.taskline.control..",
                        "dev.taskline.schedule..",
                        "dev.taskline.auth..",
                        "dev.taskline.metrics..",
                        "dev.taskline.handler..",
                        "dev.taskline.workflow..",
                        "dev.taskline.cluster.."));
    }

    @Test
    void the_cluster_reaches_the_journal_alone_and_wakes_no_part_itself() {
        holds(noClasses()
                .that()
                .resideInAPackage("dev.taskline.cluster..")
                .should()
                .dependOnClassesThat()
                .resideInAnyPackage(
                        "dev.taskline",
                        "dev.taskline.http..",
                        "dev.taskline.service..",
                        "dev.taskline.admission..",
                        "dev.taskline.queue..",
                        "dev.taskline.worker..",
                        "dev.taskline.recovery..",
                        "dev.taskline.events..",
                        "dev.taskline.control..",
                        "dev.taskline.schedule..",
                        "dev.taskline.handler..",
                        "dev.taskline.workflow.."));
    }

    @Test
    void the_journal_depends_on_nothing_of_ours_but_the_model_and_the_config() {
        holds(noClasses()
                .that()
                .resideInAPackage("dev.taskline.journal..")
                .should()
                .dependOnClassesThat()
                .resideInAnyPackage(
                        "dev.taskline.http..",
                        "dev.taskline.service..",
                        "dev.taskline.admission..",
                        "dev.taskline.queue..",
                        "dev.taskline.worker..",
                        "dev.taskline.recovery..",
                        "dev.taskline.events..",
                        "dev.taskline.control..",
                        "dev.taskline.schedule..",
                        "dev.taskline.handler..",
                        "dev.taskline.workflow..",
                        "dev.taskline.cluster.."));
    }

    @Test
    void http_goes_through_the_services_and_is_handed_no_journal() {
        holds(noClasses()
                .that()
                .resideInAPackage("dev.taskline.http..")
                .should()
                .dependOnClassesThat()
                .resideInAPackage("dev.taskline.journal.."));
    }

    @Test
    void flows_are_reached_through_the_services_and_reach_no_route_or_worker() {
        holds(noClasses()
                .that()
                .resideInAnyPackage("dev.taskline.http..", "dev.taskline.worker..", "dev.taskline.queue..")
                .should()
                .dependOnClassesThat()
                .resideInAPackage("dev.taskline.workflow.."));
        holds(noClasses()
                .that()
                .resideInAPackage("dev.taskline.workflow..")
                .should()
                .dependOnClassesThat()
                .resideInAnyPackage("dev.taskline.http..", "dev.taskline.service..", "dev.taskline.worker.."));
    }

    @Test
    void the_queue_is_memory_only() {
        holds(noClasses()
                .that()
                .resideInAPackage("dev.taskline.queue..")
                .should()
                .dependOnClassesThat()
                .resideInAnyPackage("dev.taskline.journal..", "dev.taskline.worker..", "dev.taskline.admission.."));
    }

    @Test
    void the_queues_are_given_their_signals_in_one_place() {
        holds(noClasses()
                .that()
                .doNotBelongToAnyOf(Taskline.class)
                .should()
                .callMethod(QueueRegistry.class, "signals", QueueSignals.class)
                .because("where a lower part must call back up, it does so through one named port, given once"
                        + " by the wiring"));
    }

    @Test
    void each_part_sees_a_queue_through_its_face_and_only_the_wiring_holds_it_whole() {
        holds(noClasses()
                .that()
                .resideOutsideOfPackage("dev.taskline.queue..")
                .and()
                .doNotBelongToAnyOf(Taskline.class)
                .should()
                .dependOnClassesThat()
                .belongToAnyOf(TaskQueue.class, QueueRegistry.class)
                .because("admission, workers, recovery and readers each hold the face of the queue they use"
                        + " (QueueRoom, QueueSlots, QueueCustody, QueueSwitch, QueueReadings)"));
    }

    @Test
    void workers_are_handed_the_journal_to_call_and_take_no_other_part_of_it() {
        DescribedPredicate<JavaClass> journalBeyondItsFace = resideInAPackage("dev.taskline.journal..")
                .and(not(type(Journal.class)))
                .and(not(type(JournalReads.class)))
                .and(not(type(JournalFlows.class)))
                .and(not(type(JournalSteps.class)))
                .as("journal classes other than Journal, JournalReads, JournalFlows and JournalSteps");
        holds(noClasses()
                .that()
                .resideInAPackage("dev.taskline.worker..")
                .should()
                .dependOnClassesThat(journalBeyondItsFace));
    }

    @Test
    void workers_take_from_queues_and_know_neither_admission_nor_http() {
        holds(noClasses()
                .that()
                .resideInAPackage("dev.taskline.worker..")
                .should()
                .dependOnClassesThat()
                .resideInAnyPackage("dev.taskline.admission..", "dev.taskline.http.."));
    }

    @Test
    void handlers_see_a_context_not_the_journal_nor_the_workers() {
        holds(noClasses()
                .that()
                .resideInAPackage("dev.taskline.handler..")
                .should()
                .dependOnClassesThat()
                .resideInAnyPackage("dev.taskline.journal..", "dev.taskline.worker.."));
    }

    @Test
    void events_talk_to_a_sink_and_know_no_http() {
        holds(noClasses()
                .that()
                .resideInAPackage("dev.taskline.events..")
                .should()
                .dependOnClassesThat()
                .resideInAPackage("dev.taskline.http.."));
    }

    @Test
    void no_source_file_of_the_server_is_over_seven_hundred_lines() throws IOException {
        List<String> tooLong = new java.util.ArrayList<>();
        try (Stream<Path> files = Files.walk(Path.of("src/main/java"))) {
            for (Path file : (Iterable<Path>) files.filter(f -> f.toString().endsWith(".java"))::iterator) {
                long lines = Files.readAllLines(file).size();
                if (lines > 700) {
                    tooLong.add(file + " (" + lines + ")");
                }
            }
        }
        assertEquals(List.of(), tooLong, "a class that large usually holds two roles: split it by role");
    }
}
