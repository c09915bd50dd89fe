package dev.taskline.cluster;

import dev.taskline.config.QueueConfig;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * The part of each queue's configuration that every node on one journal must agree on: what kind
 * of worker takes its tasks (a node running {@code q} locally beside one running it remotely would
 * each take the other's tasks), which types it runs, its keys' bounds and its rate limit (both
 * counted across nodes in the journal). Slots, claim-ahead, capacity and the like may differ per
 * node and are left out. Canonical: keys sorted, lists sorted, so that equal definitions give equal
 * texts and hashes on every node.
 */
public final class QueueDefinitions {

    private final Map<String, JsonObject> byQueue;
    private final String text;
    private final String hash;

    private QueueDefinitions(Map<String, JsonObject> byQueue) {
        this.byQueue = byQueue;
        JsonObject all = new JsonObject();
        byQueue.forEach(all::put);
        this.text = all.encode();
        this.hash = sha256(text);
    }

    public static QueueDefinitions of(Collection<QueueConfig> queues) {
        Map<String, JsonObject> byQueue = new TreeMap<>();
        for (QueueConfig queue : queues) {
            byQueue.put(queue.name(), definition(queue));
        }
        // Read back from its own text, so that its numbers are of the types another node's parse gives.
        return parse(new QueueDefinitions(byQueue).text());
    }

    /** As another node journaled them ({@link #text}). */
    public static QueueDefinitions parse(String text) {
        JsonObject all = new JsonObject(text);
        Map<String, JsonObject> byQueue = new TreeMap<>();
        for (String name : all.fieldNames()) {
            byQueue.put(name, all.getJsonObject(name));
        }
        return new QueueDefinitions(byQueue);
    }

    static JsonObject definition(QueueConfig queue) {
        Map<String, Object> fields = new TreeMap<>();
        fields.put("kind", queue.push() != null ? "push" : queue.remote() ? "remote" : "local");
        fields.put(
                "types", queue.types() == null ? null : new JsonArray(new ArrayList<>(new TreeSet<>(queue.types()))));
        QueueConfig.KeyLimits keys = queue.keyLimits();
        fields.put(
                "keyLimits",
                keys.any()
                        ? new JsonObject()
                                .put("overrides", new JsonObject(new TreeMap<>(keys.overrides())))
                                .put("perKey", keys.perKey())
                        : null);
        QueueConfig.RateLimit rate = queue.rateLimit();
        fields.put(
                "rateLimit",
                rate == null
                        ? null
                        : new JsonObject()
                                .put("perKey", rate.perKey())
                                .put("perMs", rate.perMs())
                                .put("tasks", rate.tasks()));
        return new JsonObject(fields);
    }

    public String text() {
        return text;
    }

    public String hash() {
        return hash;
    }

    /**
     * Where these definitions and {@code other}'s differ, for the queues both define (a node may
     * serve fewer queues than another), by queue then field.
     */
    public List<Difference> differences(QueueDefinitions other) {
        List<Difference> found = new ArrayList<>();
        byQueue.forEach((queue, mine) -> {
            JsonObject theirs = other.byQueue.get(queue);
            if (theirs == null) {
                return;
            }
            TreeSet<String> fields = new TreeSet<>(mine.fieldNames());
            fields.addAll(theirs.fieldNames());
            for (String field : fields) {
                Object a = mine.getValue(field);
                Object b = theirs.getValue(field);
                if (!Objects.equals(a, b)) {
                    found.add(new Difference(queue, field, a, b));
                }
            }
        });
        return found;
    }

    /** One field of one queue defined two ways: {@code mine} here, {@code theirs} on the other node. */
    public record Difference(String queue, String field, Object mine, Object theirs) {}

    private static String sha256(String text) {
        try {
            byte[] digest = MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8));
            return HexFormat.of().formatHex(digest, 0, 8);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every JVM has SHA-256", e);
        }
    }
}
