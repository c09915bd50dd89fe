package dev.taskline.support;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import io.vertx.core.json.Json;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.core.json.jackson.DatabindCodec;
import java.math.BigInteger;
import org.junit.jupiter.api.Test;

/** Vert.x reads and writes JSON with the streaming codec, and what it reads is what data binding read. */
class StreamingJsonTest {

    @Test
    void vertx_uses_the_streaming_codec_not_data_binding() {
        assertEquals(io.vertx.core.json.jackson.JacksonCodec.class, Json.CODEC.getClass());
        assertFalse(Json.CODEC instanceof DatabindCodec);
    }

    @Test
    void numbers_strings_and_nesting_read_as_before() {
        JsonObject read = new JsonObject("{\"i\":1,\"l\":5000000000,\"b\":123456789012345678901234567890,\"d\":0.5,"
                + "\"s\":\"\\u00e9\",\"n\":null,\"a\":[true,{\"x\":[]}],\"i\":2}");
        assertEquals(Integer.class, read.getValue("i").getClass());
        assertEquals(2, read.getInteger("i"), "the last of a repeated key wins");
        assertEquals(Long.class, read.getValue("l").getClass());
        assertEquals(BigInteger.class, read.getValue("b").getClass());
        assertEquals(0.5, read.getDouble("d"));
        assertEquals("é", read.getString("s"));
        assertEquals(new JsonArray().add(true).add(new JsonObject().put("x", new JsonArray())), read.getJsonArray("a"));
        assertEquals(read, new JsonObject(read.encode()));
    }
}
