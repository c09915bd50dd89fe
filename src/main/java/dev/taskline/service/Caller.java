package dev.taskline.service;

import dev.taskline.model.problem.ForbiddenException;
import java.util.EnumSet;
import java.util.Set;

/**
 * Who asks the service for something. Every operation takes one, so that who may do what, and as
 * which tenant, is decided in the services (see {@link Services}) once for every way in (HTTP, streams, the
 * dashboard).
 *
 * <p>With auth off every caller is {@link #ANONYMOUS}: it may do everything, acts as whichever
 * tenant it names and sees every task. With keys, a caller is its key: a key with a tenant acts
 * only as that tenant and sees only its tasks (another tenant's task is not found, exactly as an
 * unknown one); a key without one sees every tenant, and only an admin key may act for a tenant
 * it names.
 *
 * @param keyId  the key's id, or null for the anonymous caller
 * @param tenant the key's tenant, or null
 * @param scopes what it may do
 * @param queues the remote queues it may work; empty: every one
 */
public record Caller(String keyId, String tenant, Set<Scope> scopes, Set<String> queues) {

    public static final Caller ANONYMOUS = new Caller(null, null, EnumSet.allOf(Scope.class), Set.of());

    /** What the key id of a stream token's caller starts with; no key's id has a ':' in it. */
    private static final String STREAM_TOKEN = "stream-token:";

    /**
     * The caller a stream token makes: it reads the one stream it was signed for, as the tenant the
     * task belongs to; {@code tokenId} tells this token from others (it opens one stream at a time).
     */
    public static Caller streamToken(String tokenId, String tenant) {
        return new Caller(STREAM_TOKEN + tokenId, tenant, EnumSet.of(Scope.READ), Set.of());
    }

    /** Whether this caller is a stream token rather than a key. */
    boolean isStreamToken() {
        return keyId != null && keyId.startsWith(STREAM_TOKEN);
    }

    public Caller {
        scopes = scopes.isEmpty() ? Set.of() : Set.copyOf(EnumSet.copyOf(scopes));
        queues = Set.copyOf(queues);
    }

    /** Refuses (403) unless this caller has {@code scope}; an admin has every scope. */
    void require(Scope scope) {
        if (!scopes.contains(scope) && !scopes.contains(Scope.ADMIN)) {
            throw new ForbiddenException("this key lacks the scope '" + scope.label() + "'");
        }
    }

    /** Refuses (403) unless this caller may work the remote queue {@code queue}. */
    void requireWork(String queue) {
        require(Scope.WORK);
        if (!queues.isEmpty() && !queues.contains(queue) && !scopes.contains(Scope.ADMIN)) {
            throw new ForbiddenException("this key may work only the queues "
                    + String.join(", ", queues.stream().sorted().toList()));
        }
    }

    /**
     * Refuses (403) unless this caller may put tasks into {@code queue} as a flow task's spawn: what a
     * submission there needs (the submit scope), and a key limited to some queues only into those.
     */
    void requireSpawn(String queue) {
        require(Scope.SUBMIT);
        if (!queues.isEmpty() && !queues.contains(queue) && !scopes.contains(Scope.ADMIN)) {
            throw new ForbiddenException("this key may spawn tasks only into the queues "
                    + String.join(", ", queues.stream().sorted().toList()) + ", not '" + queue + "'");
        }
    }

    /** The tenant a request of this caller acts for, given the one it names (null: none). */
    String tenantFor(String named) {
        if (keyId == null || scopes.contains(Scope.ADMIN)) {
            return named;
        }
        if (named != null) {
            throw new ForbiddenException(
                    tenant != null
                            ? "a key of tenant '" + tenant + "' acts as that tenant; Taskline-Tenant is for admin keys"
                            : "Taskline-Tenant is for admin keys acting for a tenant");
        }
        return tenant;
    }

    /** Whether this caller may see (and act on) a task of {@code taskTenant} (null: a task without one). */
    boolean sees(String taskTenant) {
        return tenant == null || tenant.equals(taskTenant);
    }

    /** Whether this caller may know who did what (the key behind a cancel, a retry, a pause). */
    boolean isAdmin() {
        return scopes.contains(Scope.ADMIN);
    }

    /** True when no task is hidden from this caller, so that no tenant needs to be looked up first. */
    boolean seesEveryTenant() {
        return tenant == null;
    }
}
