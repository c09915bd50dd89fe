package dev.taskline.handler;

import io.vertx.core.Future;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;

/**
 * {@code rank}: the fan-in of the motivating case. Run after the qualification matches of a flow
 * (a chord's {@code then}), it orders its parents' results by {@code score}, best first; parents
 * that did not succeed, or gave no score, are listed apart as unranked. The payload may name
 * {@code by} another numeric field to order on, and {@code limit} the most to keep.
 */
public final class RankHandler implements TaskHandler {

    static final int MAX_LIMIT = 100_000;

    @Override
    public String type() {
        return "rank";
    }

    @Override
    public void validate(JsonObject payload) throws InvalidPayloadException {
        settings(payload);
    }

    @Override
    public Future<JsonObject> run(TaskContext context) {
        Settings settings;
        try {
            settings = settings(context.payload());
        } catch (InvalidPayloadException e) {
            return Future.failedFuture(new PermanentTaskException(e.getMessage()));
        }
        return Future.succeededFuture(rank(context.parents(), context.parentStates(), settings.by, settings.limit));
    }

    /** The ranking of {@code parents} (key to result) on their field {@code by}; pure, for tests. */
    static JsonObject rank(Map<String, Object> parents, Map<String, String> states, String by, int limit) {
        record Entry(String key, double value, JsonObject result) {}
        List<Entry> ranked = new ArrayList<>();
        JsonArray unranked = new JsonArray();
        parents.forEach((key, value) -> {
            if (!"succeeded".equals(states.getOrDefault(key, "succeeded"))
                    || !(value instanceof JsonObject result)
                    || !(result.getValue(by) instanceof Number number)) {
                unranked.add(new JsonObject().put("key", key).put("state", states.get(key)));
                return;
            }
            ranked.add(new Entry(key, number.doubleValue(), result));
        });
        // Best first; equal values in key order, so that the same results always rank the same.
        ranked.sort(Comparator.comparingDouble(Entry::value).reversed().thenComparing(Entry::key));
        JsonArray ranking = new JsonArray();
        for (int i = 0; i < ranked.size() && i < limit; i++) {
            Entry entry = ranked.get(i);
            JsonObject line = new JsonObject()
                    .put("rank", i + 1)
                    .put("key", entry.key())
                    .put(by, entry.result().getValue(by));
            if (entry.result().containsKey("project")) {
                line.put("project", entry.result().getValue("project"));
            }
            ranking.add(line);
        }
        return new JsonObject().put("by", by).put("ranking", ranking).put("unranked", unranked);
    }

    private record Settings(String by, int limit) {}

    private static Settings settings(JsonObject payload) throws InvalidPayloadException {
        if (payload == null) {
            return new Settings("score", MAX_LIMIT);
        }
        Object by = payload.getValue("by", "score");
        if (!(by instanceof String field) || field.isEmpty() || field.length() > 128) {
            throw new InvalidPayloadException("by must be a field name of 1 to 128 characters");
        }
        Object limit = payload.getValue("limit", MAX_LIMIT);
        if (!(limit instanceof Integer n) || n < 1 || n > MAX_LIMIT) {
            throw new InvalidPayloadException("limit must be an integer from 1 to " + MAX_LIMIT);
        }
        return new Settings(field, n);
    }
}
