package dev.taskline.journal;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.FileAttribute;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A node's hold on its data directory, for its whole life: an OS lock on {@code node.lock} in it.
 * The OS lets go of it when the process ends, however it ends (a SIGKILL too), and the PostgreSQL
 * the node started does not inherit it. So a node that cannot take it knows that a live node holds
 * the directory, and leaves it and its PostgreSQL alone; one that takes it knows that a PostgreSQL
 * still running on the data outlived a node that is gone. The file holds the holder's pid, for
 * the refusal's message only.
 */
final class DataDirectoryLock implements AutoCloseable {

    static final String FILE = "node.lock";

    /**
     * The directories this JVM holds. The OS lock is the process's: a second channel of the same
     * JVM would not be refused by it, and closing that channel would drop the first one's lock
     * (POSIX record locks). So a directory is never opened twice here; the second start is refused
     * as another process's would be.
     */
    private static final Set<Path> HELD = ConcurrentHashMap.newKeySet();

    private final Path dir;
    private final FileChannel channel;
    private final FileLock lock;

    private DataDirectoryLock(Path dir, FileChannel channel, FileLock lock) {
        this.dir = dir;
        this.channel = channel;
        this.lock = lock;
    }

    /** Takes {@code dir} (which exists) for this process; refused while a running node holds it. */
    static DataDirectoryLock take(Path dir) throws IOException {
        Path real = dir.toRealPath();
        if (!HELD.add(real)) {
            throw new DataDirectoryInUseException(real, ProcessHandle.current().pid());
        }
        Path file = real.resolve(FILE);
        FileChannel channel = null;
        try {
            channel = EmbeddedPasswords.posix()
                    ? FileChannel.open(file, options(), ownerOnly())
                    : FileChannel.open(file, options());
            FileLock lock = channel.tryLock();
            if (lock == null) {
                throw new DataDirectoryInUseException(real, holder(file));
            }
            channel.truncate(0);
            channel.write(
                    ByteBuffer.wrap((ProcessHandle.current().pid() + "\n").getBytes(StandardCharsets.US_ASCII)), 0);
            return new DataDirectoryLock(real, channel, lock);
        } catch (IOException | RuntimeException e) {
            if (channel != null) {
                channel.close();
            }
            HELD.remove(real);
            throw e;
        }
    }

    private static Set<StandardOpenOption> options() {
        return Set.of(StandardOpenOption.CREATE, StandardOpenOption.READ, StandardOpenOption.WRITE);
    }

    private static FileAttribute<?> ownerOnly() {
        return PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------"));
    }

    /** The pid the holder wrote, or null: not written yet, or unreadable where locks are mandatory. */
    private static Long holder(Path file) {
        try {
            String text = Files.readString(file, StandardCharsets.US_ASCII).trim();
            return text.isEmpty() ? null : Long.valueOf(text);
        } catch (IOException | NumberFormatException e) {
            return null;
        }
    }

    /** Lets the directory go: after the node's PostgreSQL has stopped. */
    @Override
    public void close() throws IOException {
        try {
            lock.release();
        } finally {
            try {
                channel.close();
            } finally {
                HELD.remove(dir);
            }
        }
    }
}
