package dev.taskline.clients;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.vertx.core.json.JsonObject;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/** The client packages are versioned with the server: a release changes the three together. */
class ClientVersionsTest {

    @Test
    void the_packages_carry_the_servers_version() throws Exception {
        String pom = Files.readString(Path.of("pom.xml"));
        Matcher m = Pattern.compile("<artifactId>taskline</artifactId>\\s*<version>([^<]+)</version>")
                .matcher(pom);
        m.find();
        String server = m.group(1); // 0.1.0-SNAPSHOT
        String release = server.replace("-SNAPSHOT", "");

        String node = new JsonObject(Files.readString(Path.of("clients/node/package.json"))).getString("version");
        assertEquals(server, node, "clients/node/package.json");

        // PEP 440 spells a snapshot as a development release: 0.1.0.dev0.
        String python = release + (server.endsWith("-SNAPSHOT") ? ".dev0" : "");
        String pyproject = Files.readString(Path.of("clients/python/pyproject.toml"));
        assertEquals(python, value(pyproject, "(?m)^version = \"([^\"]+)\""), "clients/python/pyproject.toml");
        String init = Files.readString(Path.of("clients/python/taskline/__init__.py"));
        assertEquals(python, value(init, "__version__ = \"([^\"]+)\""), "taskline.__version__");
    }

    private static String value(String text, String regex) {
        Matcher m = Pattern.compile(regex).matcher(text);
        return m.find() ? m.group(1) : null;
    }
}
