package dev.taskline.worker;

import dev.taskline.auth.Signer;
import dev.taskline.model.Lease;
import dev.taskline.model.problem.InvalidLeaseTokenException;
import java.util.UUID;
import java.util.regex.Pattern;

/**
 * The lease a remote worker holds, as an opaque token: the task, the lease version, the attempt,
 * the task's most attempts, its queue, the worker's name and the task's tenant, signed
 * (HMAC-SHA256) with a secret the nodes of a journal share. A token cannot be turned into another task's or version's, and any node can
 * check one another node issued. The journal still fences every write by version and worker: the
 * signature only keeps a caller from naming a lease it was never given.
 */
public final class LeaseTokens {

    /** A remote worker's name: what it may call itself, nothing that needs escaping. */
    public static final Pattern WORKER = Pattern.compile("[A-Za-z0-9._:@-]{1,128}");

    /** v2 binds the task's tenant (v1, before it, did not: a v1 token is no longer read). */
    private static final String VERSION = "v2";

    private final Signer signer;

    public LeaseTokens(byte[] secret) {
        this.signer = new Signer(secret);
    }

    /**
     * What a token says, once its signature holds: the lease, the task's queue, its most attempts and
     * its tenant (null: none).
     */
    public record Token(Lease lease, String queue, int maxAttempts, String tenant) {}

    public String sign(Lease lease, String queue, int maxAttempts, String tenant) {
        return signer.signFields(
                VERSION,
                lease.taskId().toString(),
                Long.toString(lease.version()),
                Integer.toString(lease.attempt()),
                Integer.toString(maxAttempts),
                queue,
                lease.workerId(),
                // No tenant's name is empty, so "" stands for none.
                tenant == null ? "" : tenant);
    }

    /** @throws InvalidLeaseTokenException when the text is not a token this journal's nodes signed */
    public Token verify(String token) {
        if (token == null) {
            throw new InvalidLeaseTokenException("lease must be a token from a claim");
        }
        String[] parts = signer.openFields(token);
        if (parts == null) {
            throw new InvalidLeaseTokenException("lease is not a token from a claim");
        }
        try {
            if (parts.length != 8 || !parts[0].equals(VERSION)) {
                throw new IllegalArgumentException(parts[0]);
            }
            Lease lease = new Lease(
                    UUID.fromString(parts[1]), parts[6], Long.parseLong(parts[2]), Integer.parseInt(parts[3]));
            return new Token(lease, parts[5], Integer.parseInt(parts[4]), parts[7].isEmpty() ? null : parts[7]);
        } catch (IllegalArgumentException e) {
            // Signed by us, so never garbled; a token of another format version lands here.
            throw new InvalidLeaseTokenException("lease is a token this node cannot read");
        }
    }
}
