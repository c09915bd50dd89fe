package dev.taskline.auth;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.taskline.config.AuthConfig;
import io.vertx.core.json.JsonObject;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

class ApiKeysTest {

    @Test
    void a_secret_is_found_by_its_hash_and_nothing_else_is() {
        String secret = ApiKeys.newSecret(new SecureRandom());
        assertTrue(secret.startsWith("tl_") && secret.length() == 46, secret);
        assertNotEquals(secret, ApiKeys.newSecret(new SecureRandom()));
        AuthConfig.Key key = new AuthConfig.Key("ci", ApiKeys.hash(secret), "acme", Set.of("submit"), Set.of());
        ApiKeys keys = new ApiKeys(new AuthConfig(List.of(key), false, false, 20));
        assertEquals(key, keys.find(secret));
        assertNull(keys.find(secret + "x"));
        assertNull(keys.find(secret.substring(3)), "without its prefix");
        assertNull(keys.find(null));
        assertNull(keys.find(ApiKeys.hash(secret)), "the hash is not a key");
    }

    @Test
    void the_hash_is_sha256_hex_of_the_secret() {
        // echo -n abc | sha256sum
        assertEquals("sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad", ApiKeys.hash("abc"));
    }

    @Test
    void new_key_prints_a_secret_and_an_entry_that_holds_only_its_hash() {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        NewKey.run(
                List.of("--id", "ci", "--tenant", "acme", "--scopes", "submit,read"),
                new PrintStream(out, true, StandardCharsets.UTF_8));
        String[] lines = out.toString(StandardCharsets.UTF_8).split("\n");
        String secret = lines[1].trim();
        JsonObject entry = new JsonObject(lines[3]);
        assertEquals(ApiKeys.hash(secret), entry.getString("hash"));
        assertEquals("ci", entry.getString("id"));
        assertEquals("acme", entry.getString("tenant"));
        assertEquals(List.of("submit", "read"), entry.getJsonArray("scopes").getList());
        assertTrue(!lines[3].contains(secret), "the entry does not hold the secret");
    }
}
