package dev.taskline.journal;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.util.Base64;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * The passwords of the embedded cluster's two roles: its superuser ({@code postgres}) and the
 * node's own ({@code taskline}, no superuser). Kept in the node's data directory as {@code pgpass},
 * readable by its owner alone (0600), in libpq's password-file format, so that an operator's
 * {@code psql} can use it as {@code PGPASSFILE}. Made once, when a cluster first gets passwords.
 *
 * @param superuser the password of {@code postgres}
 * @param app the password of {@code taskline}, which the node connects as
 */
record EmbeddedPasswords(String superuser, String app) {

    static final String FILE = "pgpass";
    static final String SUPERUSER = "postgres";
    static final String APP_ROLE = "taskline";

    /** What a password made here looks like: 32 random bytes, base64url (nothing to quote in SQL or a URL). */
    private static final Pattern MADE = Pattern.compile("[A-Za-z0-9_-]{43}");

    private static final Set<PosixFilePermission> OWNER_ONLY =
            EnumSet.of(PosixFilePermission.OWNER_READ, PosixFilePermission.OWNER_WRITE);

    EmbeddedPasswords {
        if (!MADE.matcher(superuser).matches() || !MADE.matcher(app).matches()) {
            throw new IllegalArgumentException("not a password made by EmbeddedPasswords.generate");
        }
    }

    static EmbeddedPasswords generate(SecureRandom random) {
        return new EmbeddedPasswords(newPassword(random), newPassword(random));
    }

    private static String newPassword(SecureRandom random) {
        byte[] bytes = new byte[32];
        random.nextBytes(bytes);
        return Base64.getUrlEncoder().withoutPadding().encodeToString(bytes);
    }

    /** The passwords in {@code dataDir}, or null when it has none yet. */
    static EmbeddedPasswords load(Path dataDir) throws IOException {
        Path file = dataDir.resolve(FILE);
        if (!Files.isRegularFile(file)) {
            return null;
        }
        if (posix() && !OWNER_ONLY.containsAll(Files.getPosixFilePermissions(file))) {
            // libpq ignores such a file too; a password others could read is no password.
            throw new IOException(file + " may be read by others than its owner: chmod 600 it, or delete it and "
                    + "restart to make new passwords");
        }
        Map<String, String> byRole = new HashMap<>();
        for (String line : Files.readAllLines(file, StandardCharsets.UTF_8)) {
            String[] fields = line.split(":", -1);
            if (!line.startsWith("#") && fields.length == 5) {
                byRole.put(fields[3], fields[4]);
            }
        }
        String superuser = byRole.get(SUPERUSER);
        String app = byRole.get(APP_ROLE);
        if (superuser == null || app == null) {
            throw new IOException(file + " lacks the password of " + (superuser == null ? SUPERUSER : APP_ROLE)
                    + "; delete it and restart to make new passwords");
        }
        try {
            return new EmbeddedPasswords(superuser, app);
        } catch (IllegalArgumentException e) {
            throw new IOException(file + " holds a password not made here; delete it and restart to make new ones");
        }
    }

    /**
     * Writes the file whole or not at all (a temporary file, 0600 from its creation, moved into
     * place), so that a crash never leaves passwords the cluster does not have.
     */
    void save(Path dataDir) throws IOException {
        Path file = dataDir.resolve(FILE);
        Path partial = dataDir.resolve(FILE + ".new");
        Files.deleteIfExists(partial);
        if (posix()) {
            Files.createFile(partial, PosixFilePermissions.asFileAttribute(OWNER_ONLY));
        } else {
            Files.createFile(partial);
        }
        String text = "# The passwords of this node's embedded PostgreSQL (libpq's PGPASSFILE format).\n"
                + "*:*:*:" + SUPERUSER + ":" + superuser + "\n"
                + "*:*:*:" + APP_ROLE + ":" + app + "\n";
        Files.writeString(partial, text, StandardCharsets.UTF_8);
        try {
            Files.move(partial, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        } catch (AtomicMoveNotSupportedException e) {
            Files.move(partial, file, StandardCopyOption.REPLACE_EXISTING);
        }
    }

    static boolean posix() {
        return FileSystems.getDefault().supportedFileAttributeViews().contains("posix");
    }

    @Override
    public String toString() {
        return "EmbeddedPasswords[...]"; // never in a log
    }
}
