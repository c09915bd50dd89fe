package dev.taskline.admission;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.TreeSet;

/** JSON with its keys sorted, so that two bodies that mean the same hash the same. */
public final class Canonical {

    private Canonical() {}

    static JsonObject sorted(JsonObject object) {
        JsonObject out = new JsonObject();
        for (String key : new TreeSet<>(object.fieldNames())) {
            Object value = object.getValue(key);
            if (value != null) {
                out.put(key, sortedValue(value));
            }
        }
        return out;
    }

    private static Object sortedValue(Object value) {
        if (value instanceof JsonObject object) {
            return sorted(object);
        }
        if (value instanceof JsonArray array) {
            JsonArray out = new JsonArray();
            for (Object item : array) {
                out.add(item == null ? null : sortedValue(item));
            }
            return out;
        }
        return value;
    }

    public static String sha256(String text) {
        try {
            return HexFormat.of()
                    .formatHex(MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("the JVM has no SHA-256", e);
        }
    }
}
