package dev.taskline.auth;

import dev.taskline.config.AuthConfig;
import dev.taskline.config.ConfigException;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.io.PrintStream;
import java.security.SecureRandom;
import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * {@code java -jar taskline.jar new-key --id ci --tenant acme --scopes submit,read [--queues a,b]}:
 * prints a new secret, once, and the entry for {@code auth.keys} that holds only its hash.
 */
public final class NewKey {

    private NewKey() {}

    public static void run(List<String> args, PrintStream out) {
        String id = null;
        String tenant = null;
        Set<String> scopes = new LinkedHashSet<>();
        Set<String> queues = new LinkedHashSet<>();
        for (int i = 0; i < args.size(); i++) {
            String flag = args.get(i);
            if (i + 1 >= args.size()) {
                throw new ConfigException("new-key: " + flag + " needs a value");
            }
            String value = args.get(++i);
            switch (flag) {
                case "--id" -> id = value;
                case "--tenant" -> tenant = value;
                case "--scopes" -> scopes.addAll(Arrays.asList(value.split(",")));
                case "--queues" -> queues.addAll(Arrays.asList(value.split(",")));
                default ->
                    throw new ConfigException(
                            "new-key: unknown option " + flag + " (known: --id, --tenant, --scopes, --queues)");
            }
        }
        String secret = ApiKeys.newSecret(new SecureRandom());
        if (id == null) {
            id = ApiKeys.idFor(secret);
        }
        // Built as the node will read it, so that a bad id, tenant or scope is refused here.
        AuthConfig.Key key = new AuthConfig.Key(id, ApiKeys.hash(secret), tenant, scopes, queues);
        JsonObject entry = new JsonObject().put("id", key.id()).put("hash", key.hash());
        if (tenant != null) {
            entry.put("tenant", tenant);
        }
        entry.put("scopes", new JsonArray(List.copyOf(scopes)));
        if (!queues.isEmpty()) {
            entry.put("queues", new JsonArray(List.copyOf(queues)));
        }
        out.println("secret (shown once; send it as Authorization: Bearer <secret>):");
        out.println(secret);
        out.println("entry for auth.keys in the config:");
        out.println(entry.encode());
    }
}
