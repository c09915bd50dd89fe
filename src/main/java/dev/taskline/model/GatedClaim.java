package dev.taskline.model;

import java.time.Instant;

/**
 * What a gated claim got: a lease; or a refusal, with (for {@link Refusal#RATE_FULL}) the first
 * instant its budget can start one more; or neither (the task was taken or ended).
 */
public record GatedClaim(Lease lease, Refusal refused, Instant retryAt) {

    /** Which gate refused a claim: the task's key was at its bound, or its rate budget was spent. */
    public enum Refusal {
        KEY_FULL,
        RATE_FULL;

        /** As claim_gated answers it. */
        public String sql() {
            return name().toLowerCase(java.util.Locale.ROOT);
        }

        /** The refusal claim_gated names {@code sql}; null for none (or an unknown name). */
        public static Refusal parse(String sql) {
            for (Refusal refusal : values()) {
                if (refusal.sql().equals(sql)) {
                    return refusal;
                }
            }
            return null;
        }
    }
}
