package dev.taskline.journal;

import static dev.taskline.testing.TestNode.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;

import dev.taskline.model.FlowInsert;
import dev.taskline.model.FlowRecord;
import dev.taskline.model.Insert;
import dev.taskline.model.Lease;
import dev.taskline.model.Parents;
import dev.taskline.model.Settled;
import dev.taskline.model.Task;
import dev.taskline.model.TaskIds;
import dev.taskline.model.TaskState;
import dev.taskline.testing.MutableClock;
import dev.taskline.testing.TestPostgres;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.pgclient.PgBuilder;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.PoolOptions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentLinkedQueue;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Settling children at the journal: a fan-in ended from several connections at once releases its
 * child exactly once, whichever commit was last; the counters of the flow add up.
 */
class JournalFlowsTest {

    private static final Duration LEASE = Duration.ofSeconds(30);

    private static Vertx vertx;
    private static final List<Pool> pools = new ArrayList<>();
    private static final List<Journal> journals = new ArrayList<>();
    private static MutableClock clock;

    @BeforeAll
    static void start() throws Exception {
        vertx = Vertx.vertx();
        clock = new MutableClock();
        // Four journals on pools of their own, one database: four nodes committing ends at once.
        String url = TestPostgres.newDatabase();
        for (int i = 0; i < 4; i++) {
            Pool pool = PgBuilder.pool()
                    .with(new PoolOptions().setMaxSize(4))
                    .connectingTo(PgUrl.parse(url))
                    .using(vertx)
                    .build();
            if (i == 0) {
                await(Migrator.migrate(vertx, pool));
            }
            pools.add(pool);
            journals.add(new Journal(pool, clock));
        }
    }

    @AfterAll
    static void stop() throws Exception {
        for (Pool pool : pools) {
            await(pool.close());
        }
        await(vertx.close());
    }

    @Test
    void a_chord_ended_from_four_journals_at_once_releases_its_then_once() throws Exception {
        int members = 400;
        UUID flowId = TaskIds.next(clock);
        List<FlowInsert.Node> nodes = new ArrayList<>();
        List<FlowInsert.Edge> edges = new ArrayList<>();
        for (int i = 0; i < members; i++) {
            nodes.add(new FlowInsert.Node(waiting(flowId), Integer.toString(i), null, 0, null));
        }
        Insert then = waiting(flowId);
        nodes.add(new FlowInsert.Node(then, "then", "all", members, null));
        for (int i = 0; i < members; i++) {
            edges.add(new FlowInsert.Edge(
                    nodes.get(i).insert().task().id(), then.task().id()));
        }
        JournalFlows flows = new JournalFlows(journals.get(0));
        await(flows.insert(new FlowInsert(flowId, "fan-in", null, nodes, edges)));

        ConcurrentLinkedQueue<Task> ready = new ConcurrentLinkedQueue<>();
        ConcurrentLinkedQueue<Settled.FlowEnd> ended = new ConcurrentLinkedQueue<>();
        journals.forEach(j -> j.signals(new JournalSignals() {
            @Override
            public void changed(java.util.Collection<UUID> ids) {}

            @Override
            public void settled(Settled s) {
                ready.addAll(s.ready());
                ended.addAll(s.flowsEnded());
            }
        }));
        List<Future<TaskState>> ends = new ArrayList<>();
        for (int i = 0; i < members; i++) {
            Journal journal = journals.get(i % journals.size());
            UUID id = nodes.get(i).insert().task().id();
            Lease lease = await(journal.claim(id, 0, "w" + (i % journals.size()), LEASE));
            assertNotNull(lease);
            ends.add(journal.succeed(lease, new JsonObject().put("i", i)));
        }
        for (Future<TaskState> end : ends) {
            assertEquals(TaskState.SUCCEEDED, await(end));
        }
        assertEquals(1, ready.size(), "the then task was released once: " + ready);
        assertEquals(then.task().id(), ready.peek().id());
        assertEquals(flowId, ready.peek().flowId());
        FlowRecord flow = await(flows.get(flowId));
        assertEquals(1, flow.unfinished());
        assertEquals("running", flow.state());
        assertEquals(members, await(flows.parents(then.task().id(), 1 << 20)).count());

        Lease thenLease = await(journals.get(1).claim(then.task().id(), 0, "w", LEASE));
        assertEquals(TaskState.SUCCEEDED, await(journals.get(1).succeed(thenLease, new JsonObject())));
        assertEquals(List.of(new Settled.FlowEnd(flowId, "succeeded")), List.copyOf(ended));
        assertEquals("succeeded", await(flows.get(flowId)).state());
    }

    @Test
    void parents_too_heavy_to_pass_on_are_refused_before_they_are_read() throws Exception {
        UUID flowId = TaskIds.next(clock);
        Insert parent = waiting(flowId);
        Insert child = waiting(flowId);
        await(new JournalFlows(journals.get(0))
                .insert(new FlowInsert(
                        flowId,
                        null,
                        null,
                        List.of(
                                new FlowInsert.Node(parent, "p", null, 0, null),
                                new FlowInsert.Node(child, "c", "all", 1, null)),
                        List.of(new FlowInsert.Edge(
                                parent.task().id(), child.task().id())))));
        Lease lease = await(journals.get(0).claim(parent.task().id(), 0, "w", LEASE));
        await(journals.get(0).succeed(lease, new JsonObject().put("big", "x".repeat(2_000))));
        JournalFlows flows = new JournalFlows(journals.get(0));
        assertEquals(1, await(flows.parents(child.task().id(), 10_000)).count());
        assertEquals(false, await(flows.parents(child.task().id(), 10_000)).byReference());
        // Heavier than the bound: how many and how much, none of it read; the pages carry it.
        var reference = await(flows.parents(child.task().id(), 1_000));
        assertEquals(true, reference.byReference());
        assertEquals(1, reference.count());
        assertEquals(true, reference.bytes() > 2_000, String.valueOf(reference.bytes()));
        var page = await(flows.parentsPage(child.task().id(), null, 10, 1_000));
        assertEquals(1, page.items().size(), "a single heavier one comes alone");
        assertEquals("p", page.items().get(0).key());
        assertEquals(null, page.next());
    }

    @Test
    void small_flows_journaled_in_one_statement_are_each_whole_with_their_own_tenant_edges_and_keys() throws Exception {
        JournalFlows flows = new JournalFlows(journals.get(0));
        List<FlowInsert> sent = new ArrayList<>();
        for (int i = 0; i < 12; i++) {
            UUID flowId = TaskIds.next(clock);
            String tenant = i % 3 == 0 ? null : "t" + (i % 3);
            Insert parent = waiting(flowId);
            Insert child = waiting(flowId);
            sent.add(new FlowInsert(
                    flowId,
                    "f" + i,
                    tenant,
                    List.of(
                            new FlowInsert.Node(parent, "p", null, 0, null),
                            new FlowInsert.Node(child, "c", "all", 1, null)),
                    List.of(new FlowInsert.Edge(parent.task().id(), child.task().id()))));
        }
        await(flows.insertAll(sent));

        UUID[] ids = sent.stream().map(FlowInsert::id).toArray(UUID[]::new);
        assertEquals(
                1L,
                count("SELECT count(DISTINCT xmin::text) AS n FROM flows WHERE id = ANY($1)", ids),
                "one statement journaled them all");
        for (FlowInsert flow : sent) {
            FlowRecord record = await(flows.get(flow.id()));
            assertEquals(flow.name(), record.name());
            assertEquals(flow.tenant(), record.tenant());
            assertEquals(2, record.size());
            assertEquals("running", record.state());
            var tasks = await(flows.tasks(flow.id(), null, 1000, 1 << 20, 1 << 20));
            assertEquals(List.of("p", "c"), tasks.stream().map(t -> t.key()).toList());
            assertEquals(
                    List.of(List.of(), List.of("p")),
                    tasks.stream().map(t -> t.dependsOn()).toList());
            for (var task : tasks) {
                assertEquals(flow.tenant(), task.tenant(), "a task has its own flow's tenant");
            }
        }
        assertEquals(24L, count("SELECT count(*) AS n FROM flow_keys WHERE flow_id = ANY($1)", ids));
    }

    private static long count(String sql, UUID[] ids) throws Exception {
        return await(pools.get(0).preparedQuery(sql).execute(io.vertx.sqlclient.Tuple.of(ids)))
                .iterator()
                .next()
                .getLong("n");
    }

    @Test
    void flow_settle_plans_its_statements_once_whatever_the_sessions_plan_cache_mode() throws Exception {
        // The node's sessions force custom plans; the function's own setting must win inside it.
        String config = await(pools.get(0)
                        .query("SELECT array_to_string(proconfig, ',') AS config FROM pg_proc"
                                + " WHERE proname = 'flow_settle'")
                        .execute())
                .iterator()
                .next()
                .getString("config");
        assertEquals("plan_cache_mode=force_generic_plan", config);
    }

    @Test
    void a_child_of_few_light_parents_is_handed_their_results_as_it_is_made_ready_and_others_read_them()
            throws Exception {
        Journal journal = journals.get(2);
        JournalFlows flows = new JournalFlows(journal);
        UUID flowId = TaskIds.next(clock);
        // a -> b (one light parent), nine parents -> nine, heavy -> h (a result past 2,048 bytes).
        Insert a = waiting(flowId);
        Insert b = waiting(flowId);
        Insert heavy = waiting(flowId);
        Insert h = waiting(flowId);
        Insert nine = waiting(flowId);
        List<FlowInsert.Node> nodes = new ArrayList<>(List.of(
                new FlowInsert.Node(a, "a", null, 0, null),
                new FlowInsert.Node(b, "b", "all", 1, null),
                new FlowInsert.Node(heavy, "heavy", null, 0, null),
                new FlowInsert.Node(h, "h", "all", 1, null),
                new FlowInsert.Node(nine, "nine", "all", 9, null)));
        List<FlowInsert.Edge> edges = new ArrayList<>(List.of(
                new FlowInsert.Edge(a.task().id(), b.task().id()),
                new FlowInsert.Edge(heavy.task().id(), h.task().id())));
        List<Insert> members = new ArrayList<>();
        for (int i = 0; i < 9; i++) {
            Insert member = waiting(flowId);
            members.add(member);
            nodes.add(new FlowInsert.Node(member, "m" + i, null, 0, null));
            edges.add(new FlowInsert.Edge(member.task().id(), nine.task().id()));
        }
        await(flows.insert(new FlowInsert(flowId, null, null, nodes, edges)));

        await(journal.succeed(await(journal.claim(a.task().id(), 0, "w", LEASE)), new JsonObject().put("total", 42)));
        // Handed over as b was made ready: a's result as its statement wrote it, without a read.
        Parents handed = journal.handedParents().take(b.task().id(), 0);
        assertNotNull(handed, "b's parent handed over");
        assertEquals(1, handed.count());
        assertEquals(Map.of("a", new JsonObject().put("total", 42)), handed.values());
        assertEquals(Map.of("a", "succeeded"), handed.states());
        assertEquals(await(flows.parents(b.task().id(), 1 << 20)).bytes(), handed.bytes(), "weighed as a read weighs");
        assertNull(journal.handedParents().take(b.task().id(), 0), "once");

        await(journal.succeed(
                await(journal.claim(heavy.task().id(), 0, "w", LEASE)),
                new JsonObject().put("blob", "x".repeat(3_000))));
        assertNull(journal.handedParents().take(h.task().id(), 0), "past 2,048 bytes: read at the start");
        Parents read = await(flows.parentsAtStart(h.task().id(), 0, 1 << 20));
        assertEquals(1, read.count());
        assertEquals(
                new JsonObject().put("blob", "x".repeat(3_000)), read.values().get("heavy"));

        for (int i = 0; i < 9; i++) {
            await(journal.succeed(
                    await(journal.claim(members.get(i).task().id(), 0, "w", LEASE)), new JsonObject().put("i", i)));
        }
        assertNull(journal.handedParents().take(nine.task().id(), 0), "nine parents: read at the start");
        assertEquals(
                9, await(flows.parentsAtStart(nine.task().id(), 0, 1 << 20)).count());

        // Handed over, but heavier than the node hands inline: a reference, as a read would give.
        await(journal.claim(b.task().id(), 0, "w", LEASE));
        journal.handedParents().ready(b.task().id(), 7, handed);
        assertNull(flows.parentsAtStart(b.task().id(), 7, 5).result().valuesJson(), "by reference past maxBytes");
        journal.handedParents().ready(b.task().id(), 7, handed);
        assertEquals(
                handed.valuesJson(),
                await(flows.parentsAtStart(b.task().id(), 8, 1 << 20)).valuesJson(),
                "another version reads the journal");
    }

    private static Insert waiting(UUID flowId) {
        return Insert.waiting(Task.builder(TaskIds.next(clock), "default", "sleep")
                .runAt(clock.instant())
                .flow(flowId)
                .build());
    }
}
