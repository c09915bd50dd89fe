package dev.taskline.model;

import com.fasterxml.jackson.core.StreamReadConstraints;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.time.Instant;
import java.util.List;
import java.util.Map;

/**
 * What the journal can keep and give back as it was given: the one rule for every JSON value that
 * reaches it, whatever the door (a request's body, a push target's answer, a local handler's
 * result or step). PostgreSQL's text and jsonb hold no NUL, and a lone surrogate is no character
 * (it would be stored as '?'). A value read back goes through the same JSON decoder a request's
 * body does, whose limits ({@link StreamReadConstraints}) a row must not pass, or every read that
 * touches it fails: a field name of at most {@value #MAX_NAME} characters, at most {@value
 * #MAX_DEPTH} levels deep; a string's length is bounded by the size a value may have ({@code
 * http.bodyLimitBytes}, itself below the decoder's string limit).
 */
public final class StoredJson {

    /** The decoder's longest field name (Jackson's default, which Vert.x keeps). */
    public static final int MAX_NAME = StreamReadConstraints.DEFAULT_MAX_NAME_LEN;
    /**
     * Levels of objects and arrays a value may have: the decoder's, less one, as a result is read
     * back inside the row's JSON in some reads (a flow's view, a claim's parents).
     */
    public static final int MAX_DEPTH = StreamReadConstraints.DEFAULT_MAX_DEPTH - 8;
    /** The decoder's longest string: no value may be large enough to hold one longer. */
    public static final int MAX_STRING = StreamReadConstraints.DEFAULT_MAX_STRING_LEN;

    private StoredJson() {}

    /**
     * What keeps {@code text} from being stored as it is, or null when nothing does: a NUL, or a
     * lone surrogate.
     */
    public static String flaw(String text) {
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (c == '\0') {
                return "contains the NUL character";
            }
            if (Character.isHighSurrogate(c) && i + 1 < text.length() && Character.isLowSurrogate(text.charAt(i + 1))) {
                i++;
            } else if (Character.isSurrogate(c)) {
                return "contains a lone surrogate, which is no character";
            }
        }
        return null;
    }

    /**
     * The first flaw of {@code value} (of any name or string in it, its depth, a value that is no
     * JSON), with where it is: a path into it ("payload.note"), or {@code root} for the value
     * itself ("the body", "the result"); null when none.
     */
    public static String flaw(Object value, String root) {
        return new Walk(root).flaw(value, "", 0);
    }

    /**
     * One look through a value: its first flaw, and on the way an upper bound of its size as JSON
     * text ({@code bound}), so that a value plainly within a size need not be encoded to be sized.
     */
    private static final class Walk {

        /** At most this many bytes a UTF-16 unit of a string can take once encoded: an escape, {@code \\uXXXX}. */
        private static final int MOST_PER_CHAR = 6;

        private final String root;
        private long bound;

        Walk(String root) {
            this.root = root;
        }

        private void counts(long bytes) {
            bound = bound + bytes < 0 ? Long.MAX_VALUE : bound + bytes;
        }

        private String flaw(Object value, String path, int depth) {
            if (value == null
                    || value instanceof Boolean
                    || value instanceof Integer
                    || value instanceof Long
                    || value instanceof Double
                    || value instanceof Float
                    || value instanceof Short
                    || value instanceof Byte
                    || value instanceof Instant) {
                // A number, a boolean, or an instant written as ISO-8601 text: at most 40 bytes each.
                counts(40);
                return null;
            }
            if (value instanceof BigInteger || value instanceof BigDecimal) {
                counts(Long.MAX_VALUE); // how the encoder writes one is its setting: sized by encoding
                return null;
            }
            if (value instanceof byte[] || value instanceof Buffer) {
                // Written as base64 text by the encoder.
                long length = value instanceof byte[] bytes ? bytes.length : ((Buffer) value).length();
                counts(4 * (length / 3 + 1) + 2);
                return null;
            }
            String where = path.isEmpty() ? root : path;
            if (value instanceof String text) {
                counts((long) MOST_PER_CHAR * text.length() + 2);
                String flaw = StoredJson.flaw(text);
                return flaw == null ? null : where + " " + flaw;
            }
            if (value instanceof Enum<?> e) {
                return flaw(e.name(), path, depth);
            }
            if (depth >= MAX_DEPTH) {
                return where + " is nested more than " + MAX_DEPTH + " levels deep";
            }
            counts(2);
            if (value instanceof JsonObject object) {
                return fields(object.getMap(), path, depth);
            }
            if (value instanceof Map<?, ?> map) {
                return fields(map, path, depth);
            }
            List<?> list = value instanceof JsonArray array ? array.getList() : value instanceof List<?> l ? l : null;
            if (list == null) {
                return where + " holds a " + value.getClass().getSimpleName() + ", which is no JSON value";
            }
            for (int i = 0; i < list.size(); i++) {
                counts(1);
                String flaw = flaw(list.get(i), path + "[" + i + "]", depth + 1);
                if (flaw != null) {
                    return flaw;
                }
            }
            return null;
        }

        private String fields(Map<?, ?> map, String path, int depth) {
            for (Map.Entry<?, ?> field : map.entrySet()) {
                String name = String.valueOf(field.getKey());
                counts((long) MOST_PER_CHAR * name.length() + 4);
                String flaw = StoredJson.flaw(name);
                if (flaw != null) {
                    return "a field name of " + (path.isEmpty() ? root : path) + " " + flaw;
                }
                if (name.length() > MAX_NAME) {
                    return "a field name of " + (path.isEmpty() ? root : path) + " is longer than " + MAX_NAME
                            + " characters";
                }
                String at = path.isEmpty() ? shortName(name) : path + "." + shortName(name);
                flaw = flaw(field.getValue(), at, depth + 1);
                if (flaw != null) {
                    return flaw;
                }
            }
            return null;
        }
    }

    /** A name as an error quotes it: a long one is cut, so that the error stays readable. */
    private static String shortName(String name) {
        return name.length() > 64 ? name.substring(0, 64) + "..." : name;
    }

    /**
     * The first flaw of {@code value} as a value the journal keeps (a result, a step's): any of
     * {@link #flaw(Object, String)}, or a size encoded past {@code maxBytes}; null when none.
     */
    public static String flaw(Object value, String root, long maxBytes) {
        Walk walk = new Walk(root);
        String flaw = walk.flaw(value, "", 0);
        if (flaw != null || walk.bound <= maxBytes) {
            // Plainly within the size, it need not be encoded here as well as where it is written.
            return flaw;
        }
        int bytes;
        try {
            bytes = io.vertx.core.json.Json.encodeToBuffer(value).length();
        } catch (RuntimeException e) {
            return root + " cannot be written as JSON: " + e.getMessage();
        }
        return bytes > maxBytes
                ? root + " is " + bytes + " bytes of JSON, more than the " + maxBytes
                        + " a value may have (http.bodyLimitBytes)"
                : null;
    }
}
