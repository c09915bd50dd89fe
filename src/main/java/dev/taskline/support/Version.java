package dev.taskline.support;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;

/** The server's version, as the build wrote it (a filtered resource from the pom). */
public final class Version {

    private static final String CURRENT = read();

    private Version() {}

    public static String current() {
        return CURRENT;
    }

    private static String read() {
        try (InputStream in = Version.class.getResourceAsStream("/dev/taskline/version.txt")) {
            return in == null ? "unknown" : new String(in.readAllBytes(), StandardCharsets.UTF_8).trim();
        } catch (IOException e) {
            return "unknown";
        }
    }
}
