package dev.taskline.http;

import static dev.taskline.testing.TestNode.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.taskline.config.ConfigException;
import dev.taskline.config.ConfigLoader;
import dev.taskline.testing.TestNode;
import dev.taskline.testing.TestPostgres;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.WebClient;
import io.vertx.ext.web.client.WebClientOptions;
import java.io.FileInputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.util.Base64;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** With http.tls the node serves HTTPS with the PEM certificate and key it is given. */
class TlsTest {

    /** A self-signed certificate for 127.0.0.1, made by the JDK's keytool and written out as PEM. */
    private static Path[] certificate(Path dir) throws Exception {
        Path store = dir.resolve("node.p12");
        String keytool =
                Path.of(System.getProperty("java.home"), "bin", "keytool").toString();
        Process made = new ProcessBuilder(
                        keytool,
                        "-genkeypair",
                        "-alias",
                        "node",
                        "-keyalg",
                        "RSA",
                        "-keysize",
                        "2048",
                        "-validity",
                        "2",
                        "-dname",
                        "CN=127.0.0.1",
                        "-ext",
                        "SAN=ip:127.0.0.1",
                        "-storetype",
                        "PKCS12",
                        "-keystore",
                        store.toString(),
                        "-storepass",
                        "changeit",
                        "-keypass",
                        "changeit")
                .redirectErrorStream(true)
                .start();
        assertTrue(
                made.waitFor(60, TimeUnit.SECONDS) && made.exitValue() == 0,
                new String(made.getInputStream().readAllBytes()));
        KeyStore keys = KeyStore.getInstance("PKCS12");
        try (FileInputStream in = new FileInputStream(store.toFile())) {
            keys.load(in, "changeit".toCharArray());
        }
        Base64.Encoder pem = Base64.getMimeEncoder(64, "\n".getBytes());
        Path cert = dir.resolve("cert.pem");
        Path key = dir.resolve("key.pem");
        Files.writeString(
                cert,
                "-----BEGIN CERTIFICATE-----\n"
                        + pem.encodeToString(keys.getCertificate("node").getEncoded())
                        + "\n-----END CERTIFICATE-----\n");
        Files.writeString(
                key,
                "-----BEGIN PRIVATE KEY-----\n"
                        + pem.encodeToString(
                                keys.getKey("node", "changeit".toCharArray()).getEncoded())
                        + "\n-----END PRIVATE KEY-----\n");
        return new Path[] {cert, key};
    }

    @Test
    void the_node_answers_over_https_and_not_over_plain_http(@TempDir Path dir) throws Exception {
        Path[] pem = certificate(dir);
        JsonObject config = new JsonObject()
                .put(
                        "http",
                        new JsonObject()
                                .put(
                                        "tls",
                                        new JsonObject()
                                                .put("certPath", pem[0].toString())
                                                .put("keyPath", pem[1].toString())));
        try (TestNode node = TestNode.start(TestPostgres.newDatabase(), config.encode())) {
            WebClient https = WebClient.create(
                    node.vertx,
                    new WebClientOptions()
                            .setSsl(true)
                            .setTrustAll(true)
                            .setVerifyHost(false)
                            .setDefaultHost("127.0.0.1")
                            .setDefaultPort(node.node.httpPort()));
            try {
                var ready = await(https.get("/health/ready").send());
                assertEquals(200, ready.statusCode());
                assertEquals(
                        "max-age=31536000", ready.getHeader("Strict-Transport-Security"), "over TLS, TLS from now on");
                assertEquals(
                        202,
                        await(https.post("/api/tasks")
                                        .sendJsonObject(new JsonObject()
                                                .put("type", "sleep")
                                                .put("payload", new JsonObject().put("ms", 0))))
                                .statusCode());
            } finally {
                https.close();
            }
            assertThrows(
                    Exception.class,
                    () -> await(node.http.get("/health/ready").timeout(10_000).send()),
                    "plain HTTP is not served on the HTTPS port");
        }
    }

    @Test
    void a_tls_file_that_is_not_there_stops_start_up_by_name(@TempDir Path dir) {
        ConfigException e = assertThrows(
                ConfigException.class,
                () -> ConfigLoader.fromJson(
                        "{\"http\":{\"tls\":{\"certPath\":\"" + dir.resolve("none.pem") + "\",\"keyPath\":\""
                                + dir.resolve("k.pem") + "\"}}}",
                        Map.of()));
        assertTrue(e.getMessage().contains("http.tls.certPath"), e.getMessage());
    }
}
