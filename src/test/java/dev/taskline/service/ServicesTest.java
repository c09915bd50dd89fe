package dev.taskline.service;

import static dev.taskline.testing.TestNode.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.taskline.admission.Admitted;
import dev.taskline.admission.Submission;
import dev.taskline.model.TaskState;
import dev.taskline.model.TaskView;
import dev.taskline.model.problem.ForbiddenException;
import dev.taskline.model.problem.InvalidTaskException;
import dev.taskline.model.problem.NotFoundException;
import dev.taskline.model.problem.TaskStateConflictException;
import dev.taskline.testing.TestNode;
import dev.taskline.testing.TestPostgres;
import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ExecutionException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The services against a real journal, below the routes: what a caller may ask and what it is
 * answered, the rules on scopes and tenants included, with no HTTP between. Where a flow or a
 * durable step is tested without a request to make.
 */
class ServicesTest {

    private static TestNode node;
    private static Services services;

    private static final Caller ACME = new Caller("acme-key", "acme", EnumSet.of(Scope.SUBMIT, Scope.READ), Set.of());
    private static final Caller GLOBEX =
            new Caller("globex-key", "globex", EnumSet.of(Scope.SUBMIT, Scope.READ), Set.of());
    private static final Caller READER = new Caller("reader", null, EnumSet.of(Scope.READ), Set.of());
    private static final Caller ADMIN = new Caller("admin", null, EnumSet.of(Scope.ADMIN), Set.of());

    @BeforeAll
    static void start() throws Exception {
        // Paused, so that what is submitted stays pending for the test to look at.
        node = TestNode.start(TestPostgres.newDatabase(), """
                {"queues": {"default": {"slots": 2, "capacity": 100}, "remote": {"remote": true, "types": ["sum"]}}}
                """);
        services = node.node.services();
        await(services.node().pause(ADMIN, "default", true));
    }

    @AfterAll
    static void stop() throws Exception {
        node.close();
    }

    private static Submission sleep() {
        return new Submission("sleep", new JsonObject(), null, null, null, null, null, null, null, null, null);
    }

    private static UUID submit(Caller caller) throws Exception {
        Admitted admitted = await(services.tasks().submit(caller, sleep(), null, null));
        return admitted.tasks().get(0).task().id();
    }

    /** What {@code future} failed with. */
    private static Throwable failure(Future<?> future) throws Exception {
        try {
            await(future);
        } catch (ExecutionException e) {
            return e.getCause();
        }
        throw new AssertionError("it succeeded");
    }

    @Test
    void a_tenants_task_is_seen_by_that_tenant_and_callers_of_every_tenant_and_by_no_other_tenant() throws Exception {
        UUID id = submit(ACME);
        TaskView seen = await(services.tasks().task(ACME, id));
        assertEquals("acme", seen.tenant());
        assertEquals(TaskState.PENDING, seen.state());
        assertNotNull(await(services.tasks().task(READER, id)));
        assertInstanceOf(NotFoundException.class, failure(services.tasks().task(GLOBEX, id)));
        List<TaskView> globexPage = await(
                        services.tasks().list(GLOBEX, new Views.TaskFilter(null, null, null, null, 100)))
                .tasks();
        assertTrue(globexPage.stream().noneMatch(t -> t.id().equals(id)), "another tenant's list leaves it out");
    }

    @Test
    void a_caller_without_the_scope_is_refused_and_nothing_is_journaled() throws Exception {
        int before = await(services.tasks().list(ADMIN, new Views.TaskFilter(null, null, null, null, 1000)))
                .tasks()
                .size();
        assertInstanceOf(ForbiddenException.class, failure(services.tasks().submit(READER, sleep(), null, null)));
        int after = await(services.tasks().list(ADMIN, new Views.TaskFilter(null, null, null, null, 1000)))
                .tasks()
                .size();
        assertEquals(before, after);
    }

    @Test
    void a_tenants_key_acts_as_its_tenant_and_may_not_name_another() throws Exception {
        assertInstanceOf(ForbiddenException.class, failure(services.tasks().submit(ACME, sleep(), null, "globex")));
        UUID forGlobex = await(services.tasks().submit(ADMIN, sleep(), null, "globex"))
                .tasks()
                .get(0)
                .task()
                .id();
        assertEquals("globex", await(services.tasks().task(GLOBEX, forGlobex)).tenant());
    }

    @Test
    void a_pending_task_is_cancelled_once_and_then_is_finished_and_may_be_retried() throws Exception {
        UUID id = submit(ACME);
        assertInstanceOf(
                TaskStateConflictException.class,
                failure(services.tasks().retry(ACME, id)),
                "a pending task is not retryable");
        assertEquals(id, await(services.tasks().cancel(ACME, id)).id());
        TaskStateConflictException again = assertInstanceOf(
                TaskStateConflictException.class, failure(services.tasks().cancel(ACME, id)));
        assertEquals(TaskStateConflictException.Kind.ALREADY_FINISHED, again.kind());
        await(services.tasks().retry(ACME, id));
        assertEquals(TaskState.PENDING, await(services.tasks().task(ACME, id)).state());
        assertInstanceOf(NotFoundException.class, failure(services.tasks().cancel(GLOBEX, id)));
    }

    @Test
    void only_an_admin_sees_which_key_cancelled_a_task_or_paused_a_queue() throws Exception {
        UUID id = submit(ACME);
        await(services.tasks().cancel(ADMIN, id));
        assertTrue(
                await(services.tasks().task(ADMIN, id)).history().stream()
                        .anyMatch(e ->
                                e.detail() != null && "admin".equals(e.detail().getString("by"))),
                "an admin sees the key");
        assertTrue(
                await(services.tasks().task(ACME, id)).history().stream()
                        .noneMatch(e -> e.detail() != null && e.detail().containsKey("by")),
                "the task's own tenant does not");
        // The same on the task's stream, which replays its history from the journal.
        List<dev.taskline.model.Event> streamed = new java.util.concurrent.CopyOnWriteArrayList<>();
        io.vertx.core.Promise<Void> ended = io.vertx.core.Promise.promise();
        await(services.tasks().streamTask(ACME, id, 0, () -> new Recording(streamed, ended)));
        await(ended.future());
        assertTrue(
                streamed.stream().anyMatch(e -> e.to() == TaskState.CANCELLED), "the cancel is streamed: " + streamed);
        assertTrue(
                streamed.stream()
                        .noneMatch(e -> e.detail() != null && e.detail().containsKey("by")),
                "without its key");
        Views.QueueView byAdmin = await(services.node().queues(ADMIN)).stream()
                .filter(q -> q.name().equals("default"))
                .findFirst()
                .orElseThrow();
        assertEquals("admin", byAdmin.control().changedBy());
        for (Caller reader : List.of(READER, ACME)) {
            Views.QueueView seen = await(services.node().queues(reader)).stream()
                    .filter(q -> q.name().equals("default"))
                    .findFirst()
                    .orElseThrow();
            assertTrue(seen.control().paused(), "paused, for everyone to see");
            assertEquals(null, seen.control().changedBy(), "by whom, for admins only");
        }
    }

    @Test
    void schedules_belong_to_no_tenant_and_a_tenants_key_does_not_see_them() throws Exception {
        assertInstanceOf(ForbiddenException.class, failure(services.schedules().list(ACME)));
        assertNotNull(await(services.schedules().list(READER)));
        assertInstanceOf(
                ForbiddenException.class,
                failure(services.schedules().create(READER, new JsonObject().put("name", "s"))),
                "making one is an admin's");
    }

    @Test
    void only_an_admin_issues_keys_and_the_node_knows_them_at_once() throws Exception {
        assertInstanceOf(
                ForbiddenException.class,
                failure(services.keys().issue(READER, null, "acme", Set.of("read"), Set.of())));
        // On a node without keys the first must be an admin key: a reader's first would lock every caller out.
        assertInstanceOf(
                dev.taskline.model.problem.KeyRefusedException.class,
                failure(services.keys().issue(ADMIN, null, "acme", Set.of("read"), Set.of())));
        await(services.keys().issue(ADMIN, null, null, Set.of("admin"), Set.of()));
        Views.IssuedKey issued = await(services.keys().issue(ADMIN, null, "acme", Set.of("read"), Set.of()));
        assertTrue(await(services.keys().list(ADMIN, List.of())).stream().anyMatch(k -> k.id().equals(issued.id())));
    }

    @Test
    void the_node_refuses_a_pause_of_a_queue_it_has_not_and_remote_work_on_a_queue_that_is_not_remote()
            throws Exception {
        assertInstanceOf(NotFoundException.class, failure(services.node().pause(ADMIN, "nope", true)));
        assertInstanceOf(
                InvalidTaskException.class,
                failure(services.work().claim(ADMIN, "default", "w1", 1, null, 0, Future.succeededFuture())));
        assertInstanceOf(
                InvalidTaskException.class,
                failure(services.work().claim(ADMIN, "remote", "w1", 0, null, 0, Future.succeededFuture())),
                "max must be at least 1");
        assertEquals(
                List.of(), await(services.work().claim(ADMIN, "remote", "w1", 1, null, 0, Future.succeededFuture())));
    }

    /** A sink that keeps the transitions it is given and says when the stream ended. */
    private record Recording(List<dev.taskline.model.Event> events, io.vertx.core.Promise<Void> ended)
            implements dev.taskline.events.StreamSink {
        public void snapshot(List<dev.taskline.model.TaskSnapshot> tasks) {}

        public void state(dev.taskline.model.Event event, Object result, Object error) {
            events.add(event);
        }

        public void result(UUID taskId, TaskState state, Object result, Object error) {}

        public void progress(UUID taskId, int percent, String message) {}

        public void end() {
            ended.tryComplete();
        }

        public boolean full() {
            return false;
        }

        public void onDrain(io.vertx.core.Handler<Void> handler) {}

        public void close() {
            ended.tryComplete();
        }
    }
}
