package dev.taskline.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.taskline.config.ConfigLoader;
import dev.taskline.config.QueueConfig;
import dev.taskline.model.LiveNode;
import java.time.Instant;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** What nodes on one journal must agree on, and how a starting node's epoch is chosen. */
class QueueDefinitionsTest {

    private static Collection<QueueConfig> queues(String json) {
        return ConfigLoader.fromJson(json, Map.of()).queues().values();
    }

    private static QueueDefinitions of(String json) {
        return QueueDefinitions.of(queues(json));
    }

    @Test
    void equal_definitions_give_equal_texts_and_hashes_whatever_the_order_they_are_written_in() {
        QueueDefinitions one = of("""
          {"queues": {"default": {}, "mail": {"remote": true, "types": ["b", "a"], "keyLimits": {"x": 1, "y": 2}, "keyConcurrency": 3}}}
          """);
        QueueDefinitions two = of("""
          {"queues": {"mail": {"keyConcurrency": 3, "keyLimits": {"y": 2, "x": 1}, "types": ["a", "b"], "remote": true}, "default": {}}}
          """);
        assertEquals(one.text(), two.text());
        assertEquals(one.hash(), two.hash());
        assertEquals(List.of(), one.differences(QueueDefinitions.parse(two.text())));
    }

    @Test
    void slots_claim_ahead_and_capacity_may_differ_per_node() {
        QueueDefinitions small = of("{\"queues\": {\"default\": {\"slots\": 1, \"capacity\": 10}}}");
        QueueDefinitions large =
                of("{\"queues\": {\"default\": {\"slots\": 64, \"capacity\": 100000, \"claimAhead\": 9}}}");
        assertEquals(small.hash(), large.hash());
    }

    @Test
    void kind_types_key_bounds_and_rate_limit_must_agree_and_each_difference_is_named() {
        QueueDefinitions local = of("{\"queues\": {\"default\": {}}}");
        assertEquals(List.of("kind"), fields(local, of("{\"queues\": {\"default\": {\"remote\": true}}}")));
        QueueDefinitions remote = of("{\"queues\": {\"default\": {\"remote\": true}}}");
        assertEquals(
                List.of("types"),
                fields(remote, of("{\"queues\": {\"default\": {\"remote\": true, \"types\": [\"sleep\"]}}}")));
        assertEquals(List.of("keyLimits"), fields(local, of("{\"queues\": {\"default\": {\"keyConcurrency\": 2}}}")));
        assertEquals(
                List.of("rateLimit"),
                fields(local, of("{\"queues\": {\"default\": {\"rateLimit\": {\"tasks\": 5, \"perMs\": 1000}}}}")));
        QueueDefinitions.Difference kind = local.differences(of("{\"queues\": {\"default\": {\"remote\": true}}}"))
                .get(0);
        assertEquals("default", kind.queue());
        assertEquals("local", kind.mine());
        assertEquals("remote", kind.theirs());
    }

    @Test
    void a_queue_only_one_node_serves_is_no_difference() {
        QueueDefinitions one = of("{\"queues\": {\"default\": {}}}");
        QueueDefinitions two = of("{\"queues\": {\"default\": {}, \"mail\": {\"remote\": true}}}");
        assertEquals(List.of(), one.differences(two));
        assertNotEquals(one.hash(), two.hash());
    }

    @Test
    void a_starting_node_agrees_with_the_newest_epoch_or_takes_over_past_it() {
        QueueDefinitions local = of("{\"queues\": {\"default\": {}}}");
        QueueDefinitions remote = of("{\"queues\": {\"default\": {\"remote\": true}}}");
        LiveNode old = live("old", local, 0);
        LiveNode rolled = live("rolled", remote, 1);

        assertEquals(0, NodePresence.epochAmong(List.of(), local, false));
        assertEquals(0, NodePresence.epochAmong(List.of(old), local, false));
        ConfigConflictException conflict =
                assertThrows(ConfigConflictException.class, () -> NodePresence.epochAmong(List.of(old), remote, false));
        assertTrue(conflict.getMessage().contains("old"), conflict.getMessage());
        assertEquals(1, NodePresence.epochAmong(List.of(old), remote, true));
        // Once rolled, the old epoch is not asked: a node of the new definition joins the newest.
        assertEquals(1, NodePresence.epochAmong(List.of(old, rolled), remote, false));
        assertThrows(ConfigConflictException.class, () -> NodePresence.epochAmong(List.of(old, rolled), local, false));
    }

    private static LiveNode live(String id, QueueDefinitions definitions, long epoch) {
        return new LiveNode(id, null, Instant.EPOCH, definitions.text(), definitions.hash(), epoch);
    }

    private static List<String> fields(QueueDefinitions a, QueueDefinitions b) {
        return a.differences(b).stream().map(QueueDefinitions.Difference::field).toList();
    }
}
