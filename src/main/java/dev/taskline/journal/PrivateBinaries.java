package dev.taskline.journal;

import io.zonky.test.db.postgres.embedded.DefaultPostgresBinaryResolver;
import io.zonky.test.db.postgres.embedded.PgBinaryResolver;
import io.zonky.test.db.postgres.util.LinuxUtils;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.DigestInputStream;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;

/**
 * The PostgreSQL binaries of one embedded cluster, unpacked under its node's data directory rather
 * than the library's default, a directory under the temporary one that it makes writable by all:
 * there, another local user could put binaries of their own in place for the node to run. One per
 * start, so that the library's cache (one unpacking per resolver) never hands this cluster another
 * one's copy; it notes the archive's digest, which names the directory the library unpacks it to,
 * so that {@link #command} can run a binary before the library does.
 */
final class PrivateBinaries implements PgBinaryResolver {

    private final Path workingDir;
    private MessageDigest md5;
    private String digest;

    PrivateBinaries(Path workingDir) {
        this.workingDir = workingDir;
    }

    Path workingDir() {
        return workingDir;
    }

    @Override
    public synchronized InputStream getPgBinary(String system, String machineHardware) throws IOException {
        InputStream archive = DefaultPostgresBinaryResolver.INSTANCE.getPgBinary(system, machineHardware);
        if (archive == null) {
            return null;
        }
        try {
            // The library reads the whole archive before it unpacks it: by then this holds its digest.
            md5 = MessageDigest.getInstance("MD5");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every JVM has MD5", e);
        }
        return new DigestInputStream(archive, md5);
    }

    /**
     * The command line that runs {@code binary} (postgres, pg_ctl) with {@code args} as the library
     * runs its own: through {@code unshare -U} where the node is root, whom PostgreSQL refuses.
     */
    synchronized List<String> command(String binary, List<String> args) throws IOException {
        if (md5 == null) {
            throw new IllegalStateException("the binaries are not unpacked yet");
        }
        if (digest == null) {
            digest = HexFormat.of().formatHex(md5.digest()); // which also resets it: once
        }
        // The library's layout: PG-<md5 of the archive>/bin.
        Path path = workingDir.resolve("PG-" + digest).resolve("bin").resolve(binary);
        if (!Files.isExecutable(path)) {
            throw new IOException("no PostgreSQL binary at " + path);
        }
        List<String> command = new ArrayList<>();
        if (LinuxUtils.isUnshareAvailable()) {
            command.addAll(List.of("unshare", "-U"));
        }
        command.add(path.toString());
        command.addAll(args);
        return command;
    }
}
